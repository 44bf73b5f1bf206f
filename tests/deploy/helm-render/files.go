package main

import (
	"encoding/base64"
	"path"
	"regexp"
	"sort"
	"strings"
)

// Files is .Files: the chart's non-template files, keyed by slash-separated relative path, with
// Helm's methods (pkg/engine/files.go).
type Files map[string][]byte

func (f Files) GetBytes(name string) []byte {
	if v, ok := f[name]; ok {
		return v
	}
	return []byte{}
}

func (f Files) Get(name string) string { return string(f.GetBytes(name)) }

// Glob matches like Helm's gobwas/glob with '/' as separator: '*' and '?' stay within a path
// element, '**' crosses them, {a,b} alternates, [..] is a class.
func (f Files) Glob(pattern string) Files {
	re, err := globRegexp(pattern)
	nf := Files{}
	if err != nil {
		return nf
	}
	for name, contents := range f {
		if re.MatchString(name) {
			nf[name] = contents
		}
	}
	return nf
}

func globRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	inAlt := 0
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(pattern[i:], ']')
			if j < 0 {
				b.WriteString(regexp.QuoteMeta(string(c)))
				continue
			}
			class := pattern[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		case c == '{':
			inAlt++
			b.WriteString("(?:")
		case c == '}' && inAlt > 0:
			inAlt--
			b.WriteString(")")
		case c == ',' && inAlt > 0:
			b.WriteString("|")
		case c == '\\' && i+1 < len(pattern):
			i++
			b.WriteString(regexp.QuoteMeta(string(pattern[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func (f Files) sortedNames() []string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AsConfig renders the files as a ConfigMap data block: base name -> contents.
func (f Files) AsConfig() string {
	if len(f) == 0 {
		return ""
	}
	m := map[string]interface{}{}
	for _, n := range f.sortedNames() {
		m[path.Base(n)] = string(f[n])
	}
	return toYAML(m)
}

// AsSecrets renders the files as a Secret data block: base name -> base64 contents.
func (f Files) AsSecrets() string {
	if len(f) == 0 {
		return ""
	}
	m := map[string]interface{}{}
	for _, n := range f.sortedNames() {
		m[path.Base(n)] = base64.StdEncoding.EncodeToString(f[n])
	}
	return toYAML(m)
}

func (f Files) Lines(p string) []string {
	if f == nil || f[p] == nil || len(f[p]) == 0 {
		return []string{}
	}
	s := string(f[p])
	if s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return strings.Split(s, "\n")
}
