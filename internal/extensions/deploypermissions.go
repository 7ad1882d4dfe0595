package extensions

import (
	"slices"
	"sort"
)

// ItemDeployPermissions returns, sorted and without repeats, every permission that deploying an
// extension item can require (one per item permissionResource). Some of them gate nothing but
// extension items, so the permission catalog is checked against these as well as against the
// operations of the OpenAPI document.
func ItemDeployPermissions() []string {
	out := make([]string, 0, len(deployPermission))
	for _, p := range deployPermission {
		out = append(out, p)
	}
	sort.Strings(out)
	return slices.Compact(out)
}
