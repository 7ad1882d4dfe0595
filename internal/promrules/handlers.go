package promrules

import (
	"bytes"
	"context"

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

// GetPrometheusRules answers the caller's team's rule file (TeamFile) in YAML (File.YAML).
//
// Errors: Forbidden when the key lacks the permission of a part of the file (TeamFile).
func (h *RuleFileHandler) GetPrometheusRules(ctx context.Context) (oas.GetPrometheusRulesOK, error) {
	file, err := TeamFile(ctx, h.db.Read(), auth.PrincipalFrom(ctx))
	if err != nil {
		return oas.GetPrometheusRulesOK{}, err
	}
	doc, err := file.YAML()
	if err != nil {
		return oas.GetPrometheusRulesOK{}, err
	}
	return oas.GetPrometheusRulesOK{Data: bytes.NewReader(doc)}, nil
}
