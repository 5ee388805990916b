// Package structure holds the tests of the code's shape: TestFunctionSizes
// keeps every function under pkg/ to at most 100 lines and six parameters,
// the limits CONTRIBUTING.md sets, so that no room of the code grows back
// into one long function.
package structure
