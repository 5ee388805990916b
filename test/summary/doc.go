// Command summary runs `go test -json ...` and prints what a person needs
// from it: each package's result line as go test prints it, the output of
// every failed test, each skipped test with its reason, and a closing line
// `N passed, N failed, N skipped` (the form CI log parsers recognise). It
// exits with go test's status, so `make test` fails exactly when go test
// does.
//
// Usage: summary go test -json [flags] [packages]
package main
