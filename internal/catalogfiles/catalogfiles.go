// Package catalogfiles reads the files of a catalog that the binary embeds and an operator's
// directory extends: the extension catalog (--extensions-dir) and the integration catalog
// (--integrations-dir). It knows nothing of the files' format.
package catalogfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Read calls add with every file of builtIn that pattern matches, in name order, named
// `built-in <file>`, then, when dir is not empty, with every regular *.json file directly in dir
// (other files and subdirectories are ignored), named `<option> <path>`. It stops at add's first
// error and returns it. A dir that is missing or unreadable is an error naming option and dir.
func Read(builtIn fs.FS, pattern, option, dir string, add func(source string, b []byte) error) error {
	names, err := fs.Glob(builtIn, pattern)
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := fs.ReadFile(builtIn, name)
		if err != nil {
			return err
		}
		if err := add("built-in "+path.Base(name), b); err != nil {
			return err
		}
	}
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %w", option, dir, pathReason(err))
	}
	for _, entry := range entries {
		if !strings.HasSuffix(entry.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, entry.Name())
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s %s: %w", option, p, pathReason(err))
		}
		if !info.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("%s %s: %w", option, p, pathReason(err))
		}
		if err := add(option+" "+p, b); err != nil {
			return err
		}
	}
	return nil
}

// pathReason keeps the reason of an *fs.PathError, whose path the message already names.
func pathReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
