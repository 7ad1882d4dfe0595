// Package buildinfo tells which build of mgmtapi is running, from what the Go toolchain stamped
// into the binary (runtime/debug.ReadBuildInfo).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Build describes the running binary. Fields the toolchain did not stamp (a test binary, a build
// outside a VCS checkout or with -buildvcs=false) are "unknown"; Modified is false then.
type Build struct {
	// Version is the main module's version: a tag such as v1.2.0, a pseudo-version, or "(devel)".
	Version string
	// Revision is the VCS commit the binary was built from; Time is its commit time (RFC 3339).
	Revision, Time string
	// Modified reports uncommitted changes in the checkout at build time.
	Modified bool
	// GoVersion is the toolchain that built the binary, such as go1.26.8.
	GoVersion string
}

// Read returns the running binary's build description; it never fails.
func Read() Build {
	info, _ := debug.ReadBuildInfo()
	return from(info)
}

// from reads what info holds; info may be nil.
func from(info *debug.BuildInfo) Build {
	b := Build{Version: "unknown", Revision: "unknown", Time: "unknown", GoVersion: runtime.Version()}
	if info == nil {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	if info.GoVersion != "" {
		b.GoVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `mgmtapi version` prints.
func (b Build) String() string {
	return fmt.Sprintf("mgmtapi %s revision %s time %s modified %t %s", b.Version, b.Revision, b.Time, b.Modified, b.GoVersion)
}
