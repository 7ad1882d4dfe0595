package api

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/ipaccess"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/server"
)

// security authenticates each request and checks the operation's permission before any
// parameter or body is decoded, so that a caller without the right learns nothing else. Being the
// first step of every operation (each one has a security requirement), it also names the
// request's operation for the metrics and the log line.
type security struct {
	authn *auth.Authenticator
	// operations hold each operation's permission, and whether it takes the operator key beside
	// team keys.
	operations  *operationTable
	operatorKey string
	// ipAccess refuses a team's keys from addresses outside its enabled ranges.
	ipAccess *ipaccess.Guard
}

// HandleApiKey authenticates a team key and requires the operation's permission.
//
// Errors: Unauthenticated for a missing or unusable key (the operator key, on an operation that
// does not take it, is named as such); Forbidden for a request from an address
// outside the key's team's enabled IP access ranges (ipaccess.Guard.Check), for a missing
// permission, and for a send-data key on any operation but ingestion; LimitExceeded (429, with Retry-After) for
// a key over its rate limit (--key-rate-limit, server.LimitKey); then Invalid for a path the
// request was found to spell wrongly before routing (withPathRefusal). On an operation that
// takes the operator key too (operatorAlso), the operator key is accepted and marks the context
// (auth.WithOperator) instead of carrying a principal.
func (s *security) HandleApiKey(ctx context.Context, operation oas.OperationName, t oas.ApiKey) (context.Context, error) {
	server.SetOperation(ctx, operation)
	op := s.record(ctx, operation)
	if op != nil && op.operatorToo && s.operatorKey != "" && auth.SameSecret(auth.KeyFromHeader(t.APIKey), s.operatorKey) {
		server.SetKeyID(ctx, operatorKeyID)
		auditOperator(ctx)
		if msg := pathRefusal(ctx); msg != "" {
			return nil, apierror.Invalidf("%s", msg)
		}
		return auth.WithOperator(ctx), nil
	}
	p, err := s.authn.Authenticate(ctx, t.APIKey)
	if err != nil {
		server.SetAuthFailure(ctx, keyFailure(t.APIKey, err))
		if s.operatorKey != "" && auth.SameSecret(auth.KeyFromHeader(t.APIKey), s.operatorKey) {
			// still a 401, and one that says what the caller holds
			return nil, apierror.Unauthenticatedf("Authorization: this is the operator key, which authenticates the operator operations "+
				"(/admin/v1/…, the teams operations) only; %s needs an API key of a team", operation)
		}
		return nil, err
	}
	need := ""
	if op != nil {
		need = op.permission
	}
	if p.SendData && need != auth.IngestPermission {
		server.SetAuthFailure(ctx, server.AuthSendDataKey)
		return nil, apierror.Forbiddenf("Authorization: a send-data key authenticates only ingestion (POST /ingest/alertmanager/v1), not %s", operation)
	}
	server.SetKeyID(ctx, p.KeyID)
	if err := s.ipAccess.Check(ctx, p.TeamID); err != nil {
		server.SetAuthFailure(ctx, server.AuthAddressNotAllowed)
		return nil, err
	}
	if err := server.LimitKey(ctx, p.KeyID); err != nil {
		return nil, err
	}
	if need == "" || !p.Can(need) {
		server.SetAuthFailure(ctx, server.AuthMissingPermission)
		return nil, apierror.Forbiddenf("the API key lacks the permission %q, which %s requires", need, operation)
	}
	auditCaller(ctx, p)
	if msg := pathRefusal(ctx); msg != "" {
		return nil, apierror.Invalidf("%s", msg)
	}
	return auth.WithPrincipal(ctx, p), nil
}

// HandleOperatorKey accepts only the deployment's operator key.
//
// Errors: Unauthenticated for any other key; then Invalid as HandleApiKey.
func (s *security) HandleOperatorKey(ctx context.Context, operation oas.OperationName, t oas.OperatorKey) (context.Context, error) {
	server.SetOperation(ctx, operation)
	if s.operatorKey == "" || !auth.SameSecret(auth.KeyFromHeader(t.APIKey), s.operatorKey) {
		server.SetAuthFailure(ctx, server.AuthInvalidOperatorKey)
		return nil, apierror.Unauthenticatedf("Authorization: the operator key is not valid")
	}
	server.SetKeyID(ctx, operatorKeyID)
	auditOperator(ctx)
	if msg := pathRefusal(ctx); msg != "" {
		return nil, apierror.Invalidf("%s", msg)
	}
	return ctx, nil
}

// keyFailure names, for the metrics of refused requests, why Authenticate refused a team key:
// no key in the header, a deactivated key, or a key that is not valid (unknown or deleted); ""
// for a failure of the server (not a refusal).
func keyFailure(header string, err error) server.AuthFailure {
	var e *apierror.Error
	switch {
	case !errors.As(err, &e) || e.Kind != apierror.Unauthenticated:
		return ""
	case auth.KeyFromHeader(header) == "":
		return server.AuthMissingKey
	case errors.Is(err, auth.ErrDeactivated), errors.Is(err, auth.ErrOwnerRevoked):
		return server.AuthDeactivatedKey
	}
	return server.AuthInvalidKey
}

// record is the record of the request's operation: the one the edge put on its context, or,
// for a request that did not come through API.ServeHTTP, the table's.
func (s *security) record(ctx context.Context, operation string) *operation {
	if op := operationOf(ctx); op != nil && op.id == operation {
		return op
	}
	return s.operations.byID[operation]
}

// pathRefusal is why the edge refuses the request's path (a 400, checkIntegerArgs), which the
// security handler answers once the caller is authenticated and authorized, so that a caller
// without the right learns nothing; "" when it does not.
func pathRefusal(ctx context.Context) string {
	if e := edgeOf(ctx); e != nil {
		return e.refusal
	}
	return ""
}
