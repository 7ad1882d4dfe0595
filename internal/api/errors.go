package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-faster/jx"
	"github.com/ogen-go/ogen/ogenerrors"
	"github.com/ogen-go/ogen/validate"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/server"
)

// statusOf is the one map from an error kind to its HTTP status.
var statusOf = map[apierror.Kind]int{
	apierror.Invalid:         http.StatusBadRequest,
	apierror.Unauthenticated: http.StatusUnauthorized,
	apierror.Forbidden:       http.StatusForbidden,
	apierror.NotFound:        http.StatusNotFound,
	apierror.Conflict:        http.StatusConflict,
	apierror.LimitExceeded:   http.StatusTooManyRequests,
}

// errorResponse is the single exit for every failure: an area's *apierror.Error, an error of
// the generated decoder or security layer, or anything else (a 500 whose details go only to the
// log, with the request id).
//
// A failure of the database (db.FaultOf) is 503, or 507 for a full disk, with Retry-After: the
// request may succeed when the database is back. It is logged at ERROR, with the request id, and
// counted in mgmtapi_database_faults_total. A request whose client went away while it was served
// (its context canceled) is counted as 499 and logged as nothing more than its access log line.
func errorResponse(ctx context.Context, err error) *oas.ErrorStatusCode {
	status, message := classify(err)
	if status == http.StatusInternalServerError || status == http.StatusUnauthorized { // the key lookup's failure is a security error
		if ctx.Err() != nil && (errors.Is(err, ctx.Err()) || db.FaultOf(err) != db.NoFault) {
			// The client went away (it closed the connection, or timed out while the process was
			// stopped): nobody reads this answer, nothing failed on the server's side, and no key
			// was refused. A statement it interrupted can end in a connection error too (pgx
			// closes a connection whose query is canceled: "bad connection"), which is the same.
			return &oas.ErrorStatusCode{StatusCode: statusClientClosedRequest, Response: oas.Error{
				Code: statusClientClosedRequest, Message: "the client closed the request before it was answered"}}
		}
		if fault := db.FaultOf(err); fault != db.NoFault {
			status, message = answerDatabaseFault(ctx, fault, err)
			return &oas.ErrorStatusCode{StatusCode: status, Response: oas.Error{Code: int32(status), Message: message}}
		}
	}
	if status == http.StatusInternalServerError {
		slog.ErrorContext(ctx, "request failed", "error", err.Error())
		message = "internal error; the server log has the details under this request's id"
	}
	return &oas.ErrorStatusCode{StatusCode: status, Response: oas.Error{Code: int32(status), Message: boundedMessage(message)}}
}

// answerDatabaseFault is the status and message of a request that failed for the database's
// fault, and sets the answer's Retry-After.
func answerDatabaseFault(ctx context.Context, fault db.Fault, err error) (int, string) {
	seconds := server.AnswerDatabaseFault(ctx, string(fault))
	if fault == db.FaultStorageFull {
		slog.ErrorContext(ctx, "database storage full", "error", err.Error())
		return http.StatusInsufficientStorage, fmt.Sprintf(
			"storage full: the database has no space left to write; retry after %d s (the server log has the details under this request's id)", seconds)
	}
	slog.ErrorContext(ctx, "database unavailable", "error", err.Error())
	return http.StatusServiceUnavailable, fmt.Sprintf(
		"database: unavailable, the server cannot reach or use its database; retry after %d s (the server log has the details under this request's id)", seconds)
}

// statusClientClosedRequest is the status counted (in /metrics and the access log) for a request
// whose client closed its connection before the answer: nginx's 499, never read by anyone.
const statusClientClosedRequest = 499

// maxMessageRunes is the Error schema's bound on message (the public documents' too).
const maxMessageRunes = 4096

// boundedMessage returns message cut to maxMessageRunes characters, ending in "…" when cut: a
// message that quotes a long input (a 10,000-character name) still fits the Error schema.
func boundedMessage(message string) string {
	if len(message) <= maxMessageRunes {
		return message
	}
	n := 0
	for i := range message {
		if n == maxMessageRunes-1 {
			return message[:i] + "…"
		}
		n++
	}
	return message
}

func classify(err error) (int, string) {
	if e, ok := apierror.As(err); ok {
		return statusOf[e.Kind], e.Message
	}
	var rule *bodyRuleError
	if errors.As(err, &rule) {
		return http.StatusBadRequest, rule.Message
	}
	var maxBytes *http.MaxBytesError
	if errors.As(err, &maxBytes) {
		return http.StatusRequestEntityTooLarge,
			fmt.Sprintf("body: larger than the limit of %d bytes", maxBytes.Limit)
	}
	var secErr *ogenerrors.SecurityError
	if errors.As(err, &secErr) {
		return http.StatusUnauthorized, "Authorization: an API key is required"
	}
	var paramsErr *ogenerrors.DecodeParamsError
	if errors.As(err, &paramsErr) {
		var p *ogenerrors.DecodeParamError
		if errors.As(err, &p) {
			return http.StatusBadRequest, describeParam(paramsErr.ID, p)
		}
		return http.StatusBadRequest, "parameters: " + err.Error()
	}
	var bodyErr *ogenerrors.DecodeRequestError
	if errors.As(err, &bodyErr) {
		return describeBody(bodyErr.ID, bodyErr.Err)
	}
	if db.IsReferenceGone(err) {
		// A write raced a delete of what it refers to: most often the caller's own team, deleted
		// by another request after this one's key was accepted. The transaction rolled back.
		return http.StatusConflict, "the request refers to something that was deleted while it was served " +
			"(its team, or a resource it names); nothing was changed"
	}
	return http.StatusInternalServerError, ""
}

// describeParam explains why the parameter p of operation (its operationId) was refused.
func describeParam(operation string, p *ogenerrors.DecodeParamError) string {
	path, leaf := p.Name, p.Err
	var v *validate.Error
	if errors.As(p.Err, &v) {
		path, leaf = validationLeaf(p.Name, v)
	} else if errors.Is(p.Err, validate.ErrFieldRequired) || strings.HasSuffix(p.Err.Error(), "not set") {
		return fmt.Sprintf("%s: is required", p.Name)
	}
	return describeLeaf(path, leaf, func() []string { return parameterEnum(operation, p.Name) })
}

// describeBody explains why the body of operation (its operationId) was refused.
func describeBody(operation string, err error) (int, string) {
	var ctErr *validate.InvalidContentTypeError
	switch {
	case errors.As(err, &ctErr):
		return http.StatusUnsupportedMediaType,
			fmt.Sprintf("Content-Type: must be %s, not %q", acceptedBodyTypes(operation), ctErr.ContentType)
	case strings.HasPrefix(err.Error(), "parse media type"):
		return http.StatusUnsupportedMediaType, "Content-Type: must be " + acceptedBodyTypes(operation)
	case errors.Is(err, validate.ErrBodyRequired):
		return http.StatusBadRequest, "body: a JSON object is required"
	}
	var decodeErr *ogenerrors.DecodeBodyError
	if errors.As(err, &decodeErr) {
		return http.StatusBadRequest, describeDecode(operation, decodeErr.Body, decodeErr.Err)
	}
	var v *validate.Error
	if errors.As(err, &v) {
		path, leaf := validationLeaf("", v)
		return http.StatusBadRequest, describeLeaf(path, leaf, func() []string { return enumAt(operation, path) })
	}
	return http.StatusBadRequest, "body: " + err.Error()
}

// describeLeaf words the rule leaf broken at path. An enumeration's generated validator does not
// say which values it takes, so its refusal lists them from the document (enum gives them).
func describeLeaf(path string, leaf error, enum func() []string) string {
	if m := invalidValue.FindStringSubmatch(leaf.Error()); m != nil {
		if values := enum(); len(values) > 0 {
			return fmt.Sprintf("%s: must be one of %s (got %q)", path, strings.Join(values, ", "), m[1])
		}
	}
	return path + ": " + apierror.DescribeRule(leaf)
}

// validationLeaf follows the generated validator's nested field errors to the rule broken, and
// returns the full path there ("groups[0].rules[1].expr"; "body" for the body itself); the
// caller words the rule ("must have at most 10000 characters (got 10001)").
func validationLeaf(prefix string, v *validate.Error) (string, error) {
	path := prefix
	var leaf error = v
	for {
		ve, ok := leaf.(*validate.Error)
		if !ok || len(ve.Fields) == 0 {
			break
		}
		f := ve.Fields[0]
		switch {
		case strings.HasPrefix(f.Name, "["):
			path += f.Name
		case path == "":
			path = f.Name
		default:
			path += "." + f.Name
		}
		leaf = f.Error
		var inner *validate.Error
		if errors.As(leaf, &inner) && inner != leaf {
			leaf = inner
		}
	}
	if path == "" {
		path = "body"
	}
	return path, leaf
}

var (
	decodeField = regexp.MustCompile(`decode field "([^"]+)"`)
	atOffset    = regexp.MustCompile(` at (\d+)$`)
	missingName = regexp.MustCompile(`invalid: (\w+) \(field required\)`)
	// invalidValue is the generated enumeration validator's refusal.
	invalidValue = regexp.MustCompile(`(?:^|: )invalid value: (.*)$`)
	// unexpectedByte is jx's "unexpected byte 49 '1'", shown as "unexpected '1'".
	unexpectedByte = regexp.MustCompile(`unexpected byte \d+ ('[^']*')`)
)

// describeDecode explains a body that is not the JSON operation expects, naming the path of the
// offending value: a body that is not JSON at all by line and column; a missing required field;
// a number the field cannot hold; a value of the wrong JSON type, by what the request body schema
// of api/openapi.yaml wants there ("groups[0].interval: must be an integer").
func describeDecode(operation string, body []byte, err error) string {
	if msg, malformed := describeMalformed(body); malformed {
		return "body: " + msg
	}
	msg := err.Error()
	var fields []string
	for _, m := range decodeField.FindAllStringSubmatch(msg, -1) {
		fields = append(fields, m[1])
	}
	if m := missingName.FindStringSubmatch(msg); m != nil {
		path := pathOfMissing(body, fields, m[1])
		if path == "" {
			path = strings.Join(append(fields, m[1]), ".")
		}
		return path + ": is required"
	}
	if strings.HasSuffix(msg, "value out of range") {
		if at, number := pathOfOutOfRange(body, fields); at != "" {
			if len(number) > 40 {
				number = number[:37] + "..."
			}
			return fmt.Sprintf("%s: %s is out of range for this field", at, number)
		}
	}
	if path, want, found := firstWrongType(operation, body); found {
		return fmt.Sprintf("%s: must be %s", path, want)
	}
	// The schema allows every value's type, yet the decoder refused one: name where it stopped
	// and what it said, without its byte offsets.
	path := ""
	if m := atOffset.FindStringSubmatch(msg); m != nil {
		offset, _ := strconv.ParseInt(m[1], 10, 64)
		path = pathAtOffset(body, offset)
	}
	if path == "" {
		path = strings.Join(fields, ".")
	}
	if path == "" {
		path = "body"
	}
	reason := msg
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		reason = msg[i+2:]
	}
	reason = atOffset.ReplaceAllString(reason, "")
	reason = unexpectedByte.ReplaceAllString(reason, "unexpected $1")
	return fmt.Sprintf("%s: is not a value this field accepts (%s)", path, reason)
}

// writeError writes an error answer outside the generated router (unknown path, wrong method,
// requests the router never sees).
func writeError(w http.ResponseWriter, status int, message string) {
	e := jx.GetEncoder()
	defer jx.PutEncoder(e)
	body := oas.Error{Code: int32(status), Message: boundedMessage(message)}
	body.Encode(e)
	// A declared length makes the answer whole as soon as it is flushed: a client reading it
	// while a refused body is still being drained (the server's lingering close) needs no more.
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(e.Bytes())))
	w.WriteHeader(status)
	_, _ = w.Write(e.Bytes())
}

// WriteError writes the Error body with the given status; the server uses it for answers it
// gives before a request reaches the API (413 for a declared length over the limit, panics).
func WriteError(w http.ResponseWriter, status int, message string) { writeError(w, status, message) }

// acceptedBodyTypes names the media types of operation's body: JSON, and YAML for a
// configuration document.
func acceptedBodyTypes(operation string) string {
	if operation == oas.ApplyTeamConfigurationOperation {
		return "application/yaml or application/json"
	}
	return "application/json"
}
