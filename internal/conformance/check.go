package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// Violation is one place where an answer breaks the public schema of its operation.
type Violation struct {
	// Operation is the public operationId (IncidentsService_GetIncident).
	Operation string
	// Status is the answer's status.
	Status int
	// Pointer is the JSON pointer of the offending value in the body ("/incident/events/0/id"),
	// "" for the answer as a whole (its status or content type).
	Pointer string
	// Reason is the library's reason, e.g. `property "firstCreatedAt" is missing`.
	Reason string
	// Detail adds, for a one-of that no alternative matched, what each alternative refused.
	Detail string
	// Value is the offending value, nil when the answer as a whole is refused.
	Value any
	// Document names the public operation and its document: "GET /x/{id}, public-spec/x.json".
	Document string
	// Superseded says that the newest document accepts the answer this older one refuses.
	Superseded bool
}

// Key is the violation without what varies between two answers of the same shape (see
// GeneralPointer): each distinct one is reported once per server.
func (v Violation) Key() Key {
	return Key{Operation: v.Operation, Pointer: GeneralPointer(v.Pointer), Reason: v.Reason}
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s status %d at %q: %s", v.Operation, v.Status, v.Pointer, v.Reason)
	if v.Detail != "" {
		s += " (" + v.Detail + ")"
	}
	return s
}

// Key names a kind of violation: a public operation, a general JSON pointer (GeneralPointer)
// and the library's reason.
type Key struct {
	Operation, Pointer, Reason string
}

var (
	arrayIndex = regexp.MustCompile(`/[0-9]+(/|$)`)
	uuidKey    = regexp.MustCompile(`/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(/|$)`)
)

// GeneralPointer replaces every array index of a JSON pointer with `*`, and every UUID map key
// (the incidents of a batch get are keyed by id) with `{id}`.
func GeneralPointer(pointer string) string {
	for range 2 { // adjacent matches share their slash
		pointer = arrayIndex.ReplaceAllString(pointer, "/*$1")
		pointer = uuidKey.ReplaceAllString(pointer, "/{id}$1")
	}
	return pointer
}

var filterOptions = &openapi3filter.Options{MultiError: true}

// Check validates one answer of the operation: a 2xx against the response the public document
// declares for its status (a 2xx it does not declare is a violation; a declared 204 without a
// body conforms), a 4xx or 5xx against the
// declared response when it has a schema, and otherwise against the shared Error schema. Other
// statuses are not checked. It returns nil when the answer conforms.
func (p *PublicOperation) Check(status int, header http.Header, body []byte) []Violation {
	out := p.check(status, header, body)
	for i := range out {
		out[i].Document = p.Method + " " + p.Path + ", " + p.folder + "/" + p.File
	}
	return out
}

func (p *PublicOperation) check(status int, header http.Header, body []byte) []Violation {
	switch {
	case status >= 200 && status < 300:
		if p.route.Operation.Responses.Status(status) == nil {
			return []Violation{{Operation: p.ID, Status: status,
				Reason: fmt.Sprintf("status %d is not declared (declared: %s)", status, p.declaredStatuses())}}
		}
		if status == http.StatusNoContent && len(body) == 0 {
			// No content is no content: the role documents declare a JSON media type for their
			// 204, but an answer without a body has no type to declare.
			return nil
		}
		return p.validate(status, header, body)
	case status >= 400 && status < 600:
		if declared := p.route.Operation.Responses.Status(status); declared != nil && declared.Value != nil {
			if media := declared.Value.Content.Get("application/json"); media != nil && media.Schema != nil {
				return p.validate(status, header, body)
			}
		}
		return p.validateError(status, header, body)
	}
	return nil
}

func (p *PublicOperation) declaredStatuses() string {
	var codes []string
	for code := range p.route.Operation.Responses.Map() {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return strings.Join(codes, ", ")
}

// validate runs openapi3filter.ValidateResponse on the answer.
func (p *PublicOperation) validate(status int, header http.Header, body []byte) []Violation {
	req := httptest.NewRequest(p.Method, p.Path, nil)
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, Route: p.route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                filterOptions,
	}
	err := openapi3filter.ValidateResponse(context.Background(), input)
	if err == nil {
		return nil
	}
	return p.violations(status, err)
}

// validateError checks an error answer against the shared Error schema.
func (p *PublicOperation) validateError(status int, header http.Header, body []byte) []Violation {
	if mediaType, _, err := mime.ParseMediaType(header.Get("Content-Type")); err != nil || mediaType != "application/json" {
		return []Violation{{Operation: p.ID, Status: status,
			Reason: fmt.Sprintf("error answer with Content-Type %q, want application/json", header.Get("Content-Type"))}}
	}
	value, err := decodeJSON(body)
	if err != nil {
		return []Violation{{Operation: p.ID, Status: status, Reason: "error body is not JSON: " + err.Error()}}
	}
	err = p.errorSchema.Value.VisitJSON(value, openapi3.MultiErrors(), openapi3.VisitAsResponse())
	if err == nil {
		return nil
	}
	return p.violations(status, err)
}

func decodeJSON(body []byte) (any, error) {
	var value any
	err := json.Unmarshal(body, &value)
	return value, err
}

// violations turns a kin-openapi error into one violation per offending value.
func (p *PublicOperation) violations(status int, err error) []Violation {
	var out []Violation
	var walk func(err error)
	walk = func(err error) {
		switch e := err.(type) {
		case *openapi3filter.ResponseError:
			if e.Err == nil {
				out = append(out, Violation{Operation: p.ID, Status: status, Reason: e.Reason})
				return
			}
			before := len(out)
			walk(e.Err)
			if len(out) == before {
				out = append(out, Violation{Operation: p.ID, Status: status, Reason: e.Reason + ": " + e.Err.Error()})
			}
		case openapi3.MultiError:
			for _, sub := range e {
				walk(sub)
			}
		case *openapi3.SchemaError:
			// Every schema of an all-of must hold: each refusal inside is a violation of its own.
			var inner openapi3.MultiError
			if e.SchemaField == "allOf" && e.Origin != nil && errors.As(e.Origin, &inner) {
				for _, sub := range inner {
					walk(sub)
				}
				return
			}
			out = append(out, Violation{Operation: p.ID, Status: status, Pointer: pointer(e),
				Reason: reason(e), Detail: alternatives(e), Value: e.Value})
		default:
			var schemaErr *openapi3.SchemaError
			if errors.As(err, &schemaErr) {
				walk(schemaErr)
				return
			}
			out = append(out, Violation{Operation: p.ID, Status: status, Reason: err.Error()})
		}
	}
	walk(err)
	return out
}

func pointer(e *openapi3.SchemaError) string {
	parts := e.JSONPointer()
	if len(parts) == 0 {
		return ""
	}
	escaped := make([]string, len(parts))
	for i, part := range parts {
		escaped[i] = strings.ReplaceAll(strings.ReplaceAll(part, "~", "~0"), "/", "~1")
	}
	return "/" + strings.Join(escaped, "/")
}

func reason(e *openapi3.SchemaError) string {
	if e.Reason != "" {
		return e.Reason
	}
	if e.Origin != nil {
		return e.Origin.Error()
	}
	return `doesn't match schema "` + e.SchemaField + `"`
}

// alternatives describes, for a one-of or all-of error, what each alternative refused: its
// first reason with the pointer relative to the value, e.g. `#0: property "x" is missing`.
func alternatives(e *openapi3.SchemaError) string {
	if e.Origin == nil {
		return ""
	}
	var multi openapi3.MultiError
	if !errors.As(e.Origin, &multi) {
		return ""
	}
	var parts []string
	for i, alt := range multi {
		var sub *openapi3.SchemaError
		if errors.As(alt, &sub) {
			where := strings.TrimPrefix(pointer(sub), pointer(e))
			text := reason(sub)
			if where != "" {
				text = where + ": " + text
			}
			parts = append(parts, "#"+strconv.Itoa(i)+": "+text)
		} else {
			parts = append(parts, "#"+strconv.Itoa(i)+": "+alt.Error())
		}
		if len(parts) == 8 {
			parts = append(parts, "…")
			break
		}
	}
	return strings.Join(parts, "; ")
}
