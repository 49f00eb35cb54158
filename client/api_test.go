package client

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// parsePackage reads the package's own (non-test) files as go doc sees
// them.
func parsePackage(t *testing.T) (*doc.Package, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/narad-io/narad/client")
	if err != nil {
		t.Fatal(err)
	}
	return p, files
}

// A public package is learnt from go doc: the package and every exported
// type, function, method, constant and variable say what they are.
func TestEveryExportedIdentifierIsDocumented(t *testing.T) {
	p, _ := parsePackage(t)
	if len(p.Doc) < 500 {
		t.Errorf("the package doc is %d bytes: it should teach the package (doc.go)", len(p.Doc))
	}
	undocumented := func(what, name, text string) {
		if strings.TrimSpace(text) == "" {
			t.Errorf("%s %s has no doc comment", what, name)
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			if v.Doc != "" {
				continue // the group's comment covers its names
			}
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				for _, n := range vs.Names {
					if n.IsExported() && vs.Doc.Text() == "" && vs.Comment.Text() == "" {
						t.Errorf("%s has no doc comment (nor does its group)", n.Name)
					}
				}
			}
		}
	}
	values(p.Consts)
	values(p.Vars)
	for _, f := range p.Funcs {
		undocumented("func", f.Name, f.Doc)
	}
	for _, typ := range p.Types {
		undocumented("type", typ.Name, typ.Doc)
		values(typ.Consts)
		values(typ.Vars)
		for _, f := range typ.Funcs {
			undocumented("func", f.Name, f.Doc)
		}
		for _, m := range typ.Methods {
			undocumented("method", typ.Name+"."+m.Name, m.Doc)
		}
	}
}

// Every call to the server can be bounded and cancelled: each exported
// method of *Client takes a context.Context first.
func TestEveryClientCallTakesAContext(t *testing.T) {
	_, files := parsePackage(t)
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() {
				continue
			}
			star, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
			if !ok || star.X.(*ast.Ident).Name != "Client" {
				continue
			}
			n++
			params := fn.Type.Params.List
			if len(params) == 0 || !isContext(params[0].Type) {
				t.Errorf("(*Client).%s does not take a context.Context as its first parameter", fn.Name.Name)
			}
		}
	}
	if n < 20 {
		t.Fatalf("found %d methods of *Client: the check is looking in the wrong place", n)
	}
}

func isContext(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "context" && sel.Sel.Name == "Context"
}
