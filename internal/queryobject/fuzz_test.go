package queryobject_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// FuzzDecode reads the query object "f" (the schema of TestDecode: arrays, an enumeration,
// integers, booleans, date-times, a map of objects with a required field, an array of objects)
// out of any raw query. The property: no panic; a refusal is an apierror.Invalid (a 400) whose
// message names the key ("f…: …"); an accepted object is one valid JSON document. The seed
// corpus is in testdata/fuzz/FuzzDecode; run longer with
//
//	go test ./internal/queryobject -run '^$' -fuzz FuzzDecode -fuzztime 30s
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{"f[tags]=A", "f.size=5&f.muted=true", `f={"size":3}`, "f[items][0][k]=x&f[items][k]=y"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		values, err := url.ParseQuery(rawQuery)
		if err != nil {
			t.Skip("not a query the server would accept")
		}
		doc, err := queryobject.Decode(values, "f", schema)
		if err != nil {
			e, ok := apierror.As(err)
			if !ok || e.Kind != apierror.Invalid {
				t.Fatalf("%q: error %v (%T) is not an apierror.Invalid", rawQuery, err, err)
			}
			if !strings.HasPrefix(e.Message, "f") || !strings.Contains(e.Message, ": ") {
				t.Fatalf("%q: message %q does not start with the key and its rule", rawQuery, e.Message)
			}
			return
		}
		if doc != nil && !json.Valid(doc) {
			t.Fatalf("%q: decoded to invalid JSON %q", rawQuery, doc)
		}
	})
}
