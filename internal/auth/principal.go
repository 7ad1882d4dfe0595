package auth

import "context"

// Principal is the authenticated caller of a request: a key of one team.
type Principal struct {
	TeamID  int64
	KeyID   string
	KeyName string
	// SendData marks a send-data key: it may call ingestion only (see SendData).
	SendData bool
	// UserID is the member who owns a personal key (a member of the team, see OwnerAccess), ""
	// for a key of the team itself.
	UserID      string
	permissions map[string]bool
}

// Can reports whether the caller holds the permission.
func (p *Principal) Can(permission string) bool { return p.permissions[permission] }

type principalKey struct{}

type operatorKey struct{}

// WithOperator returns a context that marks the request as made with the deployment's operator
// key, on an operation that takes it beside team keys (x-operator-key: accepted).
func WithOperator(ctx context.Context) context.Context {
	return context.WithValue(ctx, operatorKey{}, true)
}

// IsOperator reports whether WithOperator marked ctx: the caller is the operator, and ctx holds no
// principal.
func IsOperator(ctx context.Context) bool {
	v, _ := ctx.Value(operatorKey{}).(bool)
	return v
}

// WithPrincipal returns a context that carries p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the caller stored by WithPrincipal. Handlers of authenticated operations
// can rely on it: the security handler runs before them and refuses requests without a key.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	if p == nil {
		// Reaching a handler without a principal is a wiring bug, never a caller's doing.
		panic("auth: no principal in context")
	}
	return p
}
