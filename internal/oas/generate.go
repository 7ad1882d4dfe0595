// Package oas holds the server and client that ogen generates from api/openapi.yaml.
// Nothing here is edited by hand: change the document and run `go generate ./internal/oas`.
package oas

//go:generate go tool ogen --config ../../api/ogen.yml --target . --package oas --clean ../../api/openapi.yaml
