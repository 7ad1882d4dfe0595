package apidocument

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestIDsIn(t *testing.T) {
	var answer any
	body := `{"zId": "z", "id": "inc1", "events": [{"id": "ev1", "caseId": 7}], "roleId": 12, "bad": {"id": ""},
		"frac": {"id": 1.5}, "neg": {"id": -3}, "name": "not an id",
		"a": {"b": {"c": {"d": {"id": "depth4"}}}}, "e": {"f": {"g": {"h": {"i": {"id": "depth5"}}}}}}`
	if err := json.Unmarshal([]byte(body), &answer); err != nil {
		t.Fatal(err)
	}
	want := []FoundID{
		{Key: "id", Value: "inc1"},
		{Key: "roleId", Value: "12", Integer: true},
		{Key: "zId", Value: "z"},
		{Key: "id", Value: "depth4"},
		{Key: "caseId", Value: "7", Integer: true},
		{Key: "id", Value: "ev1"},
	}
	if got := IDsIn(answer); !reflect.DeepEqual(got, want) {
		t.Fatalf("IDsIn:\n got %+v\nwant %+v", got, want)
	}
}
