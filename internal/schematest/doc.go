// Package schematest checks rootfs-trim's JSON documents against their
// JSON Schemas in docs/schema, for tests: a real output must validate, and
// the Go type that writes it must have exactly the schema's properties, so
// that a field added to an output without its schema fails a test.
//
// Validation is github.com/santhosh-tekuri/jsonschema/v6 (draft 2020-12,
// formats and content encodings asserted). The package is for tests only:
// nothing in the binary imports it.
package schematest
