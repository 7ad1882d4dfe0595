package api

import (
	"slices"
	"testing"
)

// TestIntegerPathArgsComeFromTheDocument: the table of integer path parameters is read from the
// document — a path item's shared parameters and components' parameters included — and names no
// string parameter.
func TestIntegerPathArgsComeFromTheDocument(t *testing.T) {
	doc, err := readDocument()
	if err != nil {
		t.Fatal(err)
	}
	args, err := integerPathArgs(doc)
	if err != nil {
		t.Fatal(err)
	}
	for operation, want := range map[string][]string{
		"GetView":          {"id"},      // a components parameter, on the path item
		"AdminImportUsage": {"team_id"}, // an inline parameter, on the path item
	} {
		if got := args[operation]; !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", operation, got, want)
		}
	}
	if _, ok := args["GetApiKey"]; ok {
		t.Errorf("GetApiKey's id is a string, yet listed: %q", args["GetApiKey"])
	}
	if len(args) < 8 {
		t.Fatalf("only %d operations have integer path parameters: %v", len(args), args)
	}
}

func TestPlainInteger(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "0": true, "42": true, "-1": true, "9223372036854775807": true,
		"+1": false, "01": false, "00": false, " 1": false, "1 ": false, "-01": false, "": false, "-": false, "1a": false,
	} {
		if got := plainInteger(s); got != want {
			t.Errorf("plainInteger(%q) = %v", s, got)
		}
	}
	for path, want := range map[string]bool{
		"/mgmt/openapi/5/data-exploration/views/v1/views/1":   false,
		"/mgmt/openapi/5/data-exploration/views/v1/views/+1":  true,
		"/mgmt/openapi/5/data-exploration/views/v1/views/01":  true,
		"/mgmt/openapi/5/data-exploration/views/v1/views/ 1":  true,
		"/mgmt/openapi/5/data-exploration/views/v1/views/abc": false,
		"/mgmt/openapi/5/data-exploration/views/v1/views/+":   false,
	} {
		if got := mayHoldPaddedNumber(path); got != want {
			t.Errorf("mayHoldPaddedNumber(%q) = %v", path, got)
		}
	}
}
