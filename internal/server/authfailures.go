package server

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
)

// AuthFailure is why a request was refused with 401 or 403, the label of
// mgmtapi_auth_failures_total. Refused attempts are counted, never stored one by one: a flood of
// bad keys costs a counter increment, not a row.
type AuthFailure string

const (
	// AuthMissingKey: no key in the Authorization header (401).
	AuthMissingKey AuthFailure = "missing_key"
	// AuthInvalidKey: a team key that is unknown or deleted (401).
	AuthInvalidKey AuthFailure = "invalid_key"
	// AuthDeactivatedKey: a team key that is deactivated (401).
	AuthDeactivatedKey AuthFailure = "deactivated_key"
	// AuthInvalidOperatorKey: any key but the operator key on an /admin/v1 operation (401).
	AuthInvalidOperatorKey AuthFailure = "invalid_operator_key"
	// AuthSendDataKey: a send-data key on an operation other than ingestion (403).
	AuthSendDataKey AuthFailure = "send_data_key"
	// AuthAddressNotAllowed: a team key used from an address outside its team's enabled IP
	// access ranges (403).
	AuthAddressNotAllowed AuthFailure = "address_not_allowed"
	// AuthMissingPermission: the key lacks the operation's permission, its access policy
	// included (403).
	AuthMissingPermission AuthFailure = "missing_permission"
	// AuthOtherUnauthenticated and AuthOtherForbidden: a 401 or 403 whose reason no one named
	// (an area's own permission check, such as an extension item's).
	AuthOtherUnauthenticated AuthFailure = "other_unauthenticated"
	AuthOtherForbidden       AuthFailure = "other_forbidden"
)

// authFailureReasons lists every AuthFailure, so that each series exists from the start.
var authFailureReasons = []AuthFailure{AuthMissingKey, AuthInvalidKey, AuthDeactivatedKey,
	AuthInvalidOperatorKey, AuthSendDataKey, AuthMissingPermission, AuthOtherUnauthenticated, AuthOtherForbidden,
	AuthAddressNotAllowed}

// SetAuthFailure records why the request whose context this is will be refused, for
// mgmtapi_auth_failures_total; counted only if the answer is a 401 or 403. Outside a request
// served by New's handler it does nothing.
func SetAuthFailure(ctx context.Context, reason AuthFailure) {
	if req, ok := ctx.Value(requestKey{}).(*request); ok {
		req.authFailure = reason
	}
}

func newAuthFailures(reg *prometheus.Registry) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mgmtapi_auth_failures_total",
		Help: "Requests refused with 401 or 403, by reason.",
	}, []string{"reason"})
	for _, r := range authFailureReasons {
		c.WithLabelValues(string(r))
	}
	reg.MustRegister(c)
	return c
}

// countAuthFailure counts a 401 or 403 answer under its reason. A request refused without a key
// before its operation's security ran (the router checks the header's presence) has no reason
// set: it is a missing key.
func (m *metrics) countAuthFailure(r *http.Request, req *request, status int) {
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	reason := req.authFailure
	switch {
	case reason != "":
	case status == http.StatusUnauthorized && r.Header.Get("Authorization") == "":
		reason = AuthMissingKey
	case status == http.StatusUnauthorized:
		reason = AuthOtherUnauthenticated
	default:
		reason = AuthOtherForbidden
	}
	m.authFailures.WithLabelValues(string(reason)).Inc()
}
