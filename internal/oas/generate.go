// Package oas holds the server and client that ogen generates from api/openapi.yaml.
// Nothing here is edited by hand: change the document and run `go generate ./internal/oas`.
// api/ogeninput hands ogen the document without the deepObject query parameters it cannot
// express (those marked x-nested-deep-object; their operations read them from the query).
package oas

//go:generate go run ../../api/ogeninput ../../api/openapi.yaml --config ../../api/ogen.yml --target . --package oas --clean
