package api

import "testing"

// A number the decoder cannot hold is located by its full path, array indexes included: beyond
// float64 first, then beyond int64, then beyond int32.
func TestPathOfOutOfRange(t *testing.T) {
	cases := []struct {
		body   string
		fields []string
		path   string
		number string
	}{
		{`{"a":[{"b":[1,2]},{"b":[3,1e999]}]}`, []string{"a", "b"}, "a[1].b[1]", "1e999"},
		{`{"x":{"n":99999999999999999999}}`, []string{"x", "n"}, "x.n", "99999999999999999999"},
		{`{"rows":[{"n":1},{"n":4294967296}]}`, []string{"rows", "n"}, "rows[1].n", "4294967296"},
		{`{"n":-1e400,"m":1e999}`, []string{"m"}, "m", "1e999"},
		{`{"n":1}`, []string{"n"}, "", ""},
		{`{"n":"1e999"}`, []string{"n"}, "", ""},
		{`not json`, []string{"n"}, "", ""},
	}
	for _, c := range cases {
		path, number := pathOfOutOfRange([]byte(c.body), c.fields)
		if path != c.path || number != c.number {
			t.Errorf("%s %v: got %q %q, want %q %q", c.body, c.fields, path, number, c.path, c.number)
		}
	}
}
