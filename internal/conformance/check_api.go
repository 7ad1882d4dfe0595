package conformance

import (
	"fmt"
	"net/http"
)

// CheckBody validates body as the JSON answer with the given status of an operation, named by
// its public operationId (IncidentsService_GetIncident) or by ours (GetIncident), for quick
// checks by hand. It fails when the operation is unknown or has no public counterpart.
func (c *Checker) CheckBody(operation string, status int, body []byte) ([]Violation, error) {
	public := c.Docs.OperationByID(operation)
	if public == nil {
		ours := c.ours[operation]
		if ours == nil {
			return nil, fmt.Errorf("%s: no such public or mgmtapi operation", operation)
		}
		if ours.Public == nil {
			return nil, fmt.Errorf("%s: no public operation: %s", operation, NotPublic[operation])
		}
		public = ours.Public
	}
	header := http.Header{"Content-Type": []string{"application/json"}}
	return public.Check(status, header, body), nil
}
