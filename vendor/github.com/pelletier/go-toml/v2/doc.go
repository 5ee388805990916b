// Package toml is a library to read and write TOML documents.
package toml
