package main

import (
	"fmt"
	"strconv"
	"strings"
)

// --set / --set-string parsing after Helm's pkg/strvals, for the forms charts actually use:
//   a.b=c            nested keys
//   a=x,b=y          several assignments (a comma inside a value must be escaped: a=x\,y)
//   a={x,y}          a list
//   a[0].b=c, a[1]=d list indexes (missing elements are padded with null, as Helm does)
//   a\.b=c           a literal dot in a key
// --set types values like Helm's typedVal: true/false/null, and integers without a leading zero
// become int64 (not float64 as values files give); everything else, floats included, is a string.

type setParser struct {
	s       []rune
	pos     int
	strings bool // --set-string: never type values
}

func parseSet(expr string, dst map[string]interface{}, stringsOnly bool) error {
	p := &setParser{s: []rune(expr), strings: stringsOnly}
	for p.pos < len(p.s) {
		if err := p.key(dst); err != nil {
			return fmt.Errorf("failed parsing --set data %q: %v", expr, err)
		}
	}
	return nil
}

// readUntil consumes runes up to (not including) one of stops, honouring backslash escapes, and
// returns what it read and the stop rune (0 at the end of input).
func (p *setParser) readUntil(stops string) (string, rune) {
	var b strings.Builder
	for p.pos < len(p.s) {
		r := p.s[p.pos]
		if r == '\\' && p.pos+1 < len(p.s) {
			b.WriteRune(p.s[p.pos+1])
			p.pos += 2
			continue
		}
		if strings.ContainsRune(stops, r) {
			p.pos++
			return b.String(), r
		}
		b.WriteRune(r)
		p.pos++
	}
	return b.String(), 0
}

func (p *setParser) typed(v string) interface{} {
	if p.strings {
		return v
	}
	switch {
	case strings.EqualFold(v, "true"):
		return true
	case strings.EqualFold(v, "false"):
		return false
	case strings.EqualFold(v, "null"):
		return nil
	case v == "0":
		return int64(0)
	}
	if len(v) > 0 && v[0] != '0' {
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return i
		}
	}
	return v
}

// value reads what follows '=': a {list} or a scalar up to the next unescaped comma.
func (p *setParser) value() (interface{}, error) {
	if p.pos < len(p.s) && p.s[p.pos] == '{' {
		p.pos++
		list := []interface{}{}
		for {
			item, stop := p.readUntil(",}")
			if stop == 0 {
				return nil, fmt.Errorf("list must terminate with '}'")
			}
			if !(stop == '}' && item == "" && len(list) == 0) {
				list = append(list, p.typed(item))
			}
			if stop == '}' {
				break
			}
		}
		if p.pos < len(p.s) {
			if p.s[p.pos] != ',' {
				return nil, fmt.Errorf("list must be followed by ',' or the end, not %q", p.s[p.pos])
			}
			p.pos++
		}
		return list, nil
	}
	v, _ := p.readUntil(",")
	return p.typed(v), nil
}

func (p *setParser) key(data map[string]interface{}) error {
	k, stop := p.readUntil("=[,.")
	if k == "" && stop != 0 {
		return fmt.Errorf("key with no name before %q", stop)
	}
	switch stop {
	case 0:
		return fmt.Errorf("key %q has no value", k)
	case ',':
		return fmt.Errorf("key %q has no value (cannot end with ,)", k)
	case '=':
		v, err := p.value()
		if err != nil {
			return fmt.Errorf("key %q: %v", k, err)
		}
		data[k] = v
		return nil
	case '.':
		inner, ok := data[k].(map[string]interface{})
		if !ok {
			inner = map[string]interface{}{}
			data[k] = inner
		}
		return p.key(inner)
	case '[':
		list, _ := data[k].([]interface{})
		list, err := p.index(list)
		if err != nil {
			return fmt.Errorf("key %q: %v", k, err)
		}
		data[k] = list
		return nil
	}
	return nil
}

// index handles `[N]` and what follows it: `=value`, `.key...` or another `[M]`.
func (p *setParser) index(list []interface{}) ([]interface{}, error) {
	n, stop := p.readUntil("]")
	if stop != ']' {
		return nil, fmt.Errorf("missing ']'")
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 {
		return nil, fmt.Errorf("invalid index %q", n)
	}
	const maxIndex = 65536 // Helm's limit, against --set a[999999999]=x eating memory
	if i > maxIndex {
		return nil, fmt.Errorf("index of %d is greater than maximum supported index value of %d", i, maxIndex)
	}
	for len(list) <= i {
		list = append(list, nil)
	}
	if p.pos >= len(p.s) {
		return nil, fmt.Errorf("index [%d] has no value", i)
	}
	next := p.s[p.pos]
	p.pos++
	switch next {
	case '=':
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		list[i] = v
	case '.':
		inner, ok := list[i].(map[string]interface{})
		if !ok {
			inner = map[string]interface{}{}
			list[i] = inner
		}
		if err := p.key(inner); err != nil {
			return nil, err
		}
	case '[':
		innerList, _ := list[i].([]interface{})
		innerList, err := p.index(innerList)
		if err != nil {
			return nil, err
		}
		list[i] = innerList
	default:
		return nil, fmt.Errorf("unexpected %q after [%d]", next, i)
	}
	return list, nil
}
