// Package archivetest builds the fixture trees and finds the external tools
// that the tests of rootfs-trim share. It imports nothing of the project,
// so that any package's tests can use it.
package archivetest
