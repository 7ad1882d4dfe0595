// Package queryobject reads query parameters that are objects (the incident aggregation's
// `filter`, `group_bys` and `pagination`) in their bracket form (`filter[severity]=X`) and dot form
// (`filter.severity=X`). The generated router does not parse them; internal/api hands the raw
// query to the operation through the request context.
package queryobject

import (
	"context"
	"net/url"
)

type valuesKey struct{}

// WithValues returns ctx carrying the request's query parameters.
func WithValues(ctx context.Context, v url.Values) context.Context {
	return context.WithValue(ctx, valuesKey{}, v)
}

// Values returns the query parameters stored by WithValues, or nil (no parameter): internal/api
// stores them only for a request with a query, parsed once, when it checks their text.
func Values(ctx context.Context) url.Values {
	v, _ := ctx.Value(valuesKey{}).(url.Values)
	return v
}
