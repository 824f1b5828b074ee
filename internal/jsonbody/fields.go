package jsonbody

import (
	"reflect"
	"strings"
	"sync"
)

// fields is what the checker needs of a struct type: its JSON field names,
// as encoding/json reads them, each with its Go type.
type fields struct {
	list   []*field
	byName map[string]*field
}

type field struct {
	name  string
	typ   reflect.Type
	index int // in fields.list
}

var (
	anyType = reflect.TypeFor[any]()
	cache   sync.Map // reflect.Type → *fields
)

// fieldsOf returns t's fields, computed once per type. Safe for concurrent
// use.
func fieldsOf(t reflect.Type) *fields {
	if fs, ok := cache.Load(t); ok {
		return fs.(*fields)
	}
	fs := &fields{byName: map[string]*field{}}
	fs.add(t, 0)
	cache.Store(t, fs)
	return fs
}

// add adds t's exported fields and, after them, those of its untagged
// embedded structs that no shallower field names (encoding/json's rule for
// the common case: a name at a lesser depth wins).
func (fs *fields) add(t reflect.Type, depth int) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		sf := t.Field(i)
		name, skip := jsonName(sf)
		switch {
		case skip:
		case sf.Anonymous && name == "" && derefStruct(sf.Type) != nil && depth < 8:
			embedded = append(embedded, derefStruct(sf.Type))
		case !sf.IsExported():
		default:
			if name == "" {
				name = sf.Name
			}
			if _, taken := fs.byName[name]; !taken {
				f := &field{name: name, typ: sf.Type, index: len(fs.list)}
				fs.list = append(fs.list, f)
				fs.byName[name] = f
			}
		}
	}
	for _, e := range embedded {
		fs.add(e, depth+1)
	}
}

// jsonName returns the name of sf's json tag ("" where none) and whether
// the tag says to skip it ("-").
func jsonName(sf reflect.StructField) (string, bool) {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		return "", true
	}
	name, _, _ := strings.Cut(tag, ",")
	return name, false
}

// derefStruct returns t, or what t points to, where that is a struct.
func derefStruct(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}
