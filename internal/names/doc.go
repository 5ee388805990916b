// Package names shows file names safely and carries them exactly. Names
// come from archives and trees an attacker may have made: a newline
// followed by "::error ..." is a GitHub workflow command in a CI log, an
// ESC sequence rewrites a terminal, a bidi override reverses what is read.
// Every text output shows names through Quote; every JSON document carries
// a name that is not UTF-8 (which encoding/json would turn into U+FFFD)
// beside its readable form through B64.
package names
