package cases

import "github.com/mgmtapi/mgmtapi/internal/db"

// CaseHandler serves the cases operations.
type CaseHandler struct {
	db *db.DB
}

// NewHandler returns the cases operations over database.
func NewHandler(database *db.DB) *CaseHandler {
	return &CaseHandler{db: database}
}
