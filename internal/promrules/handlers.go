package promrules

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// RuleFileHandler implements the Prometheus rule file operation of oas.Handler.
type RuleFileHandler struct {
	db *db.DB
}

// NewHandler returns the Prometheus rule file operation.
func NewHandler(database *db.DB) *RuleFileHandler { return &RuleFileHandler{db: database} }

// GetPrometheusRules answers the caller's team's rule file (TeamFile) in YAML (File.YAML), with
// its ETag (FileETag); 304 without a body when If-None-Match names that ETag or is "*".
//
// Errors: Forbidden when the key lacks the permission of a part of the file (TeamFile).
func (h *RuleFileHandler) GetPrometheusRules(ctx context.Context, params oas.GetPrometheusRulesParams) (oas.GetPrometheusRulesRes, error) {
	file, err := TeamFile(ctx, h.db.Read(), auth.PrincipalFrom(ctx))
	if err != nil {
		return nil, err
	}
	doc, err := file.YAML()
	if err != nil {
		return nil, err
	}
	etag := FileETag(doc)
	if held, ok := params.IfNoneMatch.Get(); ok && MatchesETag(held, etag) {
		return &oas.GetPrometheusRulesNotModified{ETag: oas.NewOptString(etag)}, nil
	}
	return &oas.GetPrometheusRulesOKHeaders{ETag: oas.NewOptString(etag), Response: oas.GetPrometheusRulesOK{Data: bytes.NewReader(doc)}}, nil
}

// FileETag is the strong entity tag of a rule file: the first 32 hex digits of its SHA-256,
// quoted. The same file always has the same tag, on any server.
func FileETag(doc []byte) string {
	sum := sha256.Sum256(doc)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// MatchesETag reports whether an If-None-Match value (a comma-separated list of entity tags, or
// "*") names etag; weak tags (W/"…") match by their value, as RFC 9110 asks for If-None-Match.
func MatchesETag(ifNoneMatch, etag string) bool {
	for _, candidate := range strings.Split(ifNoneMatch, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}
