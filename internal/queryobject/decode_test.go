package queryobject_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

var schema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
	"tags":  {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String, Enum: []string{"A", "B"}}},
	"size":  {Kind: queryobject.Integer},
	"muted": {Kind: queryobject.Boolean},
	"at":    {Kind: queryobject.DateTime},
	"labels": {Kind: queryobject.Map, Elem: &queryobject.Schema{Kind: queryobject.Object, Required: []string{"values"},
		Fields: map[string]*queryobject.Schema{"values": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}}}}},
	"items": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"k": {Kind: queryobject.String},
	}}},
}}

func TestDecode(t *testing.T) {
	cases := []struct{ query, want string }{
		{"", ""},
		{"other=1", ""},
		{"f[tags]=A&f[tags]=B", `{"tags":["A","B"]}`},
		{"f.tags=B&f[tags][0]=A", `{"tags":["A","B"]}`},
		{"f[tags][1]=B&f[tags][0]=A", `{"tags":["A","B"]}`},
		{"f[tags][]=A", `{"tags":["A"]}`},
		{"f.size=5&f.muted=true&f.at=2024-01-01T00:00:00Z", `{"at":"2024-01-01T00:00:00Z","muted":true,"size":5}`},
		// values of different keys come in the order of the keys ("." sorts before "[")
		{"f[labels][svc][values]=api&f.labels.svc.values=web", `{"labels":{"svc":{"values":["web","api"]}}}`},
		{"f[items][0][k]=x&f[items][1].k=y", `{"items":[{"k":"x"},{"k":"y"}]}`},
		{"f[unknown]=1&f[unknown][deep]=2&f.size=1", `{"size":1}`},
		{`f={"size":3}`, `{"size":3}`},
		// the only item of an array of objects, without its index, in either form
		{"f[items][k]=x", `{"items":[{"k":"x"}]}`},
		{"f.items.k=x", `{"items":[{"k":"x"}]}`},
		{"f[items].k=x&f[items][unknown]=1", `{"items":[{"k":"x"}]}`},
	}
	for _, c := range cases {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := queryobject.Decode(v, "f", schema)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if string(doc) != c.want {
			t.Fatalf("%s: got %s, want %s", c.query, doc, c.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ query, want string }{
		{"f[tags]=C", "f.tags[0]: must be one of A, B"},
		{"f.size=x", "f.size: must be an integer"},
		{"f.size=1&f.size=2", "f.size: must be given once"},
		{"f.size=1&f[size]=2", "f.size: must be given once"},
		{"f.muted=yes", "f.muted: must be true or false"},
		{"f.at=now", "f.at: must be an RFC 3339 date-time"},
		{"f[labels][svc][other]=1", "f.labels.svc.values: is required"},
		{"f[items][k]=1&f[items][0][k]=2", "f.items: index every item"},
		{"f.items.k=1&f.items.k=2", "f.items[0].k: must be given once"},
		{"f[items]=1", "f.items: items of this array are objects"},
		{"f[items][-1][k]=1", "is not an array index"},
		{"f[items][99999999][k]=1", "is not an array index"},
		{"f[size][x]=1", "f.size: is not an object"},
		{"f=1", "f: must be an object"},
		{"f[size=1", "unclosed"},
		{"f..size=1", "empty field name"},
		{"f={bad", "f: must be a valid JSON document"},
	}
	for _, c := range cases {
		v, err := url.ParseQuery(c.query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = queryobject.Decode(v, "f", schema)
		e, ok := apierror.As(err)
		if !ok || e.Kind != apierror.Invalid {
			t.Fatalf("%s: error %v, want Invalid", c.query, err)
		}
		if !strings.Contains(e.Message, c.want) {
			t.Fatalf("%s: message %q does not contain %q", c.query, e.Message, c.want)
		}
	}
}

func TestValues(t *testing.T) {
	if queryobject.Values(context.Background()) != nil {
		t.Fatal("values without WithValues")
	}
	v := url.Values{"a": {"1"}}
	if got := queryobject.Values(queryobject.WithValues(context.Background(), v)); got.Get("a") != "1" {
		t.Fatalf("values = %v", got)
	}
}
