package ingest

import "github.com/mgmtapi/mgmtapi/internal/db"

// AlertHandler serves the ingest operations.
type AlertHandler struct {
	db *db.DB
}

// NewHandler returns the ingest operations over database.
func NewHandler(database *db.DB) *AlertHandler {
	return &AlertHandler{db: database}
}
