package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "gopkg.in/yaml.v2"
)

// Metadata is Chart.yaml with the field names Helm exposes as .Chart (chart.Metadata), so that
// `.Chart.AppVersion` works and a misspelt `.Chart.Appversion` fails the way it does under Helm.
type Metadata struct {
	Name         string            `yaml:"name"`
	Home         string            `yaml:"home"`
	Sources      []string          `yaml:"sources"`
	Version      string            `yaml:"version"`
	Description  string            `yaml:"description"`
	Keywords     []string          `yaml:"keywords"`
	Maintainers  []*Maintainer     `yaml:"maintainers"`
	Icon         string            `yaml:"icon"`
	APIVersion   string            `yaml:"apiVersion"`
	Condition    string            `yaml:"condition"`
	Tags         string            `yaml:"tags"`
	AppVersion   string            `yaml:"appVersion"`
	Deprecated   bool              `yaml:"deprecated"`
	Annotations  map[string]string `yaml:"annotations"`
	KubeVersion  string            `yaml:"kubeVersion"`
	Dependencies []*Dependency     `yaml:"dependencies"`
	Type         string            `yaml:"type"`
}

type Maintainer struct {
	Name  string `yaml:"name"`
	Email string `yaml:"email"`
	URL   string `yaml:"url"`
}

type Dependency struct {
	Name       string `yaml:"name"`
	Version    string `yaml:"version"`
	Repository string `yaml:"repository"`
	Condition  string `yaml:"condition"`
	Alias      string `yaml:"alias"`
}

// Chart is a loaded chart directory.
type Chart struct {
	Dir       string
	Meta      *Metadata
	Values    map[string]interface{}
	Schema    []byte            // values.schema.json, nil when absent
	Templates map[string]string // "templates/x.yaml" -> source
	Files     Files             // everything else that .helmignore keeps
}

func loadChart(dir string) (*Chart, error) {
	c := &Chart{Dir: dir, Templates: map[string]string{}, Files: Files{}}
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, fmt.Errorf("Chart.yaml file is missing: %v", err)
	}
	c.Meta = &Metadata{}
	if err := yaml.Unmarshal(raw, c.Meta); err != nil {
		return nil, fmt.Errorf("cannot load Chart.yaml: %v", err)
	}
	if err := validateMetadata(c.Meta); err != nil {
		return nil, fmt.Errorf("validation: chart.metadata.%v", err)
	}
	ignore, err := loadHelmignore(dir)
	if err != nil {
		return nil, err
	}
	err = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if ignore.Ignore(rel, fi) {
			if fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if fi.IsDir() {
			if rel == "charts" {
				// Subcharts are not supported; say so rather than render a different chart.
				if entries, _ := os.ReadDir(path); len(entries) > 0 {
					return fmt.Errorf("subcharts (charts/) are not supported by helm-render")
				}
			}
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case rel == "Chart.yaml", rel == "Chart.lock", rel == "requirements.yaml", rel == "requirements.lock":
		case rel == "values.yaml":
			if c.Values, err = parseYAMLMap(data); err != nil {
				return fmt.Errorf("cannot load values.yaml: %v", err)
			}
		case rel == "values.schema.json":
			c.Schema = data
		case strings.HasPrefix(rel, "templates/"):
			c.Templates[rel] = string(data)
		default:
			c.Files[rel] = data
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if c.Values == nil {
		c.Values = map[string]interface{}{}
	}
	return c, nil
}

func validateMetadata(m *Metadata) error {
	if m.APIVersion == "" {
		return fmt.Errorf("apiVersion is required")
	}
	if m.Name == "" {
		return fmt.Errorf("name is required")
	}
	if m.Version == "" {
		return fmt.Errorf("version is required")
	}
	if m.Type != "" && m.Type != "application" && m.Type != "library" {
		return fmt.Errorf("type must be application or library")
	}
	return nil
}

func (c *Chart) templateNames() []string {
	names := make([]string, 0, len(c.Templates))
	for n := range c.Templates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
