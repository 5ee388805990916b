// Package names shows file names safely and carries them exactly. Names
// come from archives, trees and images an attacker may have made: a
// newline followed by "::error ..." (or "::stop-commands::", which
// silences every later annotation), and "##[error]" anywhere in a line, are
// GitHub workflow commands in a CI log (Command); an ESC sequence rewrites
// a terminal, a bidi override reverses what is read. Every text output
// shows names, and any other string an input chose (a platform, a layer's
// name, a boot configuration's place), through Quote, and free text
// through Text; every JSON document carries a name that is not UTF-8
// (which encoding/json would turn into U+FFFD) beside its readable form
// through B64.
package names
