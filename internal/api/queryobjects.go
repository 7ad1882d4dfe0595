package api

import (
	"net/url"
	"strings"
)

// Query objects (deepObject parameters: E18's filter, group_bys and pagination, the v2 usage
// objects, extension_deployment) are read by their operations from the whole query
// (internal/queryobject), in every form the contract accepts: bracket, dot, indexed, unindexed
// for one element, JSON. The generated decoder knows only the bracket form of the flat ones, and
// would refuse or misread the others; it is therefore handed the query without them, so that each
// query object has one reader and one wording of its errors. An operation's record holds the
// names of its deepObject parameters (operation.queryObjects).

// withoutQueryObjects returns rawQuery without the keys of the named query objects (the name
// itself, name[…] and name.…), or rawQuery itself when it holds none of them.
func withoutQueryObjects(rawQuery string, names []string) string {
	if len(names) == 0 || rawQuery == "" {
		return rawQuery
	}
	belongs := func(key string) bool {
		for _, n := range names {
			if key == n || strings.HasPrefix(key, n+"[") || strings.HasPrefix(key, n+".") {
				return true
			}
		}
		return false
	}
	parts := strings.Split(rawQuery, "&")
	kept := parts[:0]
	for _, part := range parts {
		rawKey, _, _ := strings.Cut(part, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil || !belongs(key) {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, "&")
}
