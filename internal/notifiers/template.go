package notifiers

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
)

// placeholder is a $NAME in a payload template: a dollar sign, a capital letter, then capitals,
// digits and underscores.
var placeholder = regexp.MustCompile(`\$[A-Z][A-Z0-9_]*`)

// values are the placeholders a payload template may hold, for m: the alert's own, then m's
// fields by their names (a field "APPLICATION_NAME" is $APPLICATION_NAME).
func values(m Message) map[string]string {
	v := map[string]string{}
	for k, f := range m.Fields {
		v["$"+k] = f
	}
	v["$ALERT_NAME"] = m.Title
	v["$ALERT_DESCRIPTION"] = m.Text
	v["$ALERT_ID"] = m.Key
	v["$ALERT_URL"] = m.Link
	v["$ALERT_STATUS"] = m.Status
	v["$EVENT_SEVERITY"] = m.severity()
	if !m.Time.IsZero() {
		v["$EVENT_TIMESTAMP"] = m.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		v["$EVENT_TIMESTAMP_MS"] = strconv.FormatInt(m.Time.UnixMilli(), 10)
	}
	return v
}

// render replaces the placeholders of tmpl with m's values, each escaped as the inside of a JSON
// string (placeholders belong inside strings). A placeholder with no value is left as written.
func render(tmpl string, m Message) []byte {
	v := values(m)
	out := placeholder.ReplaceAllStringFunc(tmpl, func(p string) string {
		s, ok := v[p]
		if !ok {
			return p
		}
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	})
	return []byte(out)
}

// checkTemplate checks that tmpl is a JSON document once its placeholders are replaced.
func checkTemplate(tmpl string) error {
	if strings.TrimSpace(tmpl) == "" {
		return nil
	}
	probe := placeholder.ReplaceAllString(tmpl, "0")
	if !json.Valid([]byte(probe)) {
		return errors.New("must be a JSON document ($NAME placeholders go inside its strings)")
	}
	return nil
}
