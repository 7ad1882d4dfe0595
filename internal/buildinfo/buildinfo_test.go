package buildinfo

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestFromReadsTheVCSStamp(t *testing.T) {
	info, err := debug.ParseBuildInfo("go\tgo1.26.8\npath\tgithub.com/mgmtapi/mgmtapi/cmd/mgmtapi\n" +
		"mod\tgithub.com/mgmtapi/mgmtapi\tv1.2.0\t\n" +
		"build\tvcs=git\nbuild\tvcs.revision=3b7fe297cb2355f7d931ae542f84f8aa18bcd8b7\n" +
		"build\tvcs.time=2026-11-24T23:00:00Z\nbuild\tvcs.modified=true\n")
	if err != nil {
		t.Fatal(err)
	}
	got := from(info)
	want := Build{Version: "v1.2.0", Revision: "3b7fe297cb2355f7d931ae542f84f8aa18bcd8b7", Time: "2026-11-24T23:00:00Z",
		Modified: true, GoVersion: "go1.26.8"}
	if got != want {
		t.Fatalf("from: %+v, want %+v", got, want)
	}
	if s := got.String(); s != "mgmtapi v1.2.0 revision 3b7fe297cb2355f7d931ae542f84f8aa18bcd8b7 time 2026-11-24T23:00:00Z modified true go1.26.8" {
		t.Fatalf("String: %q", s)
	}
}

func TestFromWithoutStampSaysUnknown(t *testing.T) {
	got := from(nil)
	if got.Version != "unknown" || got.Revision != "unknown" || got.Time != "unknown" || got.Modified || got.GoVersion != runtime.Version() {
		t.Fatalf("from(nil): %+v", got)
	}
	info, _ := debug.ParseBuildInfo("go\tgo1.26.8\npath\tx\nmod\tx\t(devel)\t\n")
	if got := from(info); got.Version != "(devel)" || got.Revision != "unknown" {
		t.Fatalf("unstamped build: %+v", got)
	}
}
