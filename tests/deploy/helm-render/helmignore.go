package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// .helmignore after Helm's pkg/ignore: one glob a line, '#' comments, a trailing '/' matches
// directories only, a leading '/' anchors to the chart root, a pattern with a '/' matches the
// whole relative path and one without matches the base name, '!' negates, '**' is rejected.
// Helm always adds "templates/.?*" (hidden files in templates/ are never templates).

type ignoreRule struct {
	raw     string
	negate  bool
	mustDir bool
	match   func(rel string, fi os.FileInfo) bool
}

type ignoreRules struct{ rules []ignoreRule }

func loadHelmignore(dir string) (*ignoreRules, error) {
	r := &ignoreRules{}
	if err := r.add("templates/.?*"); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, ".helmignore"))
	if os.IsNotExist(err) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if err := r.add(sc.Text()); err != nil {
			return nil, fmt.Errorf(".helmignore: %v", err)
		}
	}
	return r, nil
}

func (r *ignoreRules) add(line string) error {
	p := strings.TrimSpace(line)
	if p == "" || strings.HasPrefix(p, "#") {
		return nil
	}
	if strings.Contains(p, "**") {
		return fmt.Errorf("double-star (**) syntax is not supported")
	}
	rule := ignoreRule{raw: p}
	if strings.HasPrefix(p, "!") {
		rule.negate = true
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		rule.mustDir = true
		p = strings.TrimSuffix(p, "/")
	}
	if _, err := filepath.Match(p, "x"); err != nil {
		return err
	}
	switch {
	case strings.HasPrefix(p, "/"):
		anchored := strings.TrimPrefix(p, "/")
		rule.match = func(rel string, _ os.FileInfo) bool { ok, _ := filepath.Match(anchored, rel); return ok }
	case strings.Contains(p, "/"):
		rule.match = func(rel string, _ os.FileInfo) bool { ok, _ := filepath.Match(p, rel); return ok }
	default:
		rule.match = func(rel string, _ os.FileInfo) bool { ok, _ := filepath.Match(p, filepath.Base(rel)); return ok }
	}
	r.rules = append(r.rules, rule)
	return nil
}

// Ignore mirrors Helm's rule loop, including its odd negation: a negated rule that does not match
// ignores the path.
func (r *ignoreRules) Ignore(rel string, fi os.FileInfo) bool {
	if rel == "" || rel == "." || rel == "./" {
		return false
	}
	for _, rule := range r.rules {
		if rule.negate {
			if rule.mustDir && !fi.IsDir() {
				return true
			}
			if !rule.match(rel, fi) {
				return true
			}
			continue
		}
		if rule.mustDir && !fi.IsDir() {
			continue
		}
		if rule.match(rel, fi) {
			return true
		}
	}
	return false
}
