package api

import (
	"context"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/server"
)

// security authenticates each request and checks the operation's permission before any
// parameter or body is decoded, so that a caller without the right learns nothing else. Being the
// first step of every operation (each one has a security requirement), it also names the
// request's operation for the metrics and the log line.
type security struct {
	authn       *auth.Authenticator
	permissions map[string]string // operationId → permission
	operatorKey string
}

// HandleApiKey authenticates a team key and requires the operation's permission.
//
// Errors: Unauthenticated for a missing or unusable key; Forbidden for a missing permission, and
// for a send-data key on any operation but ingestion; LimitExceeded (429, with Retry-After) for
// a key over its rate limit (--key-rate-limit, server.LimitKey).
func (s *security) HandleApiKey(ctx context.Context, operation oas.OperationName, t oas.ApiKey) (context.Context, error) {
	server.SetOperation(ctx, operation)
	p, err := s.authn.Authenticate(ctx, t.APIKey)
	if err != nil {
		return nil, err
	}
	need := s.permissions[operation]
	if p.SendData && need != auth.IngestPermission {
		return nil, apierror.Forbiddenf("Authorization: a send-data key authenticates only ingestion (POST /ingest/alertmanager/v1), not %s", operation)
	}
	server.SetKeyID(ctx, p.KeyID)
	if err := server.LimitKey(ctx, p.KeyID); err != nil {
		return nil, err
	}
	if need == "" || !p.Can(need) {
		return nil, apierror.Forbiddenf("the API key lacks the permission %q, which %s requires", need, operation)
	}
	return auth.WithPrincipal(ctx, p), nil
}

// HandleOperatorKey accepts only the deployment's operator key.
//
// Errors: Unauthenticated for any other key.
func (s *security) HandleOperatorKey(ctx context.Context, operation oas.OperationName, t oas.OperatorKey) (context.Context, error) {
	server.SetOperation(ctx, operation)
	if s.operatorKey == "" || !auth.SameSecret(auth.KeyFromHeader(t.APIKey), s.operatorKey) {
		return nil, apierror.Unauthenticatedf("Authorization: the operator key is not valid")
	}
	server.SetKeyID(ctx, "operator")
	return ctx, nil
}
