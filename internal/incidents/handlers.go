package incidents

import "github.com/mgmtapi/mgmtapi/internal/db"

// IncidentHandler serves the incidents operations.
type IncidentHandler struct {
	db *db.DB
}

// NewHandler returns the incidents operations over database.
func NewHandler(database *db.DB) *IncidentHandler {
	return &IncidentHandler{db: database}
}
