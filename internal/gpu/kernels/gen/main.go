// Command gen writes the kernel table of package kernels from the
// kernels' extern "C" declarations in ptx/src (their real C types: in the
// PTX a float* and a double* are both .u64) and checks it against the
// committed PTX: the same kernels, the same number and sizes of
// parameters. Launch bounds (.maxntid, .minnctapersm) come from the PTX.
//
// Usage (from internal/gpu/kernels, as go generate runs it):
//
//	go run ./gen [-root ../../..] [-check]
//
// -check writes nothing and fails when the committed files differ from
// what the sources give. It needs a C preprocessor (cpp, from gcc) to
// expand the kernels' macros; the CUDA toolkit is not needed.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// module is a PTX module: its source and PTX files, as package ptx lists
// them (ptx.Modules, in the same order).
type module struct{ name, src, ptx string }

var modules = []module{
	{"tridiag", "ptx/src/tridiag.cu", "ptx/tridiag.ptx"},
	{"banded", "ptx/src/banded.cu", "ptx/banded.ptx"},
	{"cluster", "ptx/src/cluster.cu", "ptx/cluster.ptx"},
	{"sparse", "ptx/src/sparse.cu", "ptx/sparse.ptx"},
	{"spline", "ptx/src/spline.cu", "ptx/spline.ptx"},
}

// param is one kernel parameter as declared in C.
type param struct {
	name, ctype string
}

// kernel is one extern "C" kernel.
type kernel struct {
	name       string
	module     int
	params     []param
	maxThreads int // .maxntid (0: none)
	minBlocks  int // .minnctapersm (0: none)
	family     string
	prec       string         // "f32", "f64" or ""
	tparams    map[string]int // template parameters in the name (p16 → p: 16)
}

func main() {
	root := flag.String("root", "../../..", "the repository's root")
	check := flag.Bool("check", false, "compare with the committed files instead of writing them")
	out := flag.String("out", ".", "the folder of package kernels")
	flag.Parse()
	if err := run(*root, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "kernels/gen:", err)
		os.Exit(1)
	}
}

func run(root, out string, check bool) error {
	var all []*kernel
	for i, m := range modules {
		ks, err := fromSource(filepath.Join(root, m.src), filepath.Join(root, "ptx/src"))
		if err != nil {
			return err
		}
		text, err := os.ReadFile(filepath.Join(root, m.ptx))
		if err != nil {
			return err
		}
		if err := matchPTX(ks, string(text), m.ptx); err != nil {
			return err
		}
		for _, k := range ks {
			k.module = i
		}
		all = append(all, ks...)
	}
	fams, err := families(all)
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	if files["table.go"], err = gofmt(tableFile(all)); err != nil {
		return err
	}
	if files["families.go"], err = gofmt(familiesFile(fams)); err != nil {
		return err
	}
	if files["launch.go"], err = gofmt(launchFile(fams)); err != nil {
		return err
	}
	for name, b := range files {
		path := filepath.Join(out, name)
		if check {
			old, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if !bytes.Equal(old, b) {
				return fmt.Errorf("%s is not what ptx/src and the PTX give: run go generate ./internal/gpu/kernels", path)
			}
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

var declRE = regexp.MustCompile(`extern\s+"C"\s+__global__\s+void\s+(?:__(?:launch_bounds|cluster_dims)__\s*\([^)]*\)\s*)*(\w+)\s*\(([^)]*)\)`)

// fromSource expands the macros of a .cu file with the C preprocessor and
// returns its extern "C" kernels in order.
func fromSource(src, inc string) ([]*kernel, error) {
	cmd := exec.Command("cpp", "-P", "-x", "c++", "-std=c++14", "-I", inc, src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	text, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("preprocessing %s: %w: %s", src, err, stderr.String())
	}
	var ks []*kernel
	for _, m := range declRE.FindAllStringSubmatch(string(text), -1) {
		k := &kernel{name: m[1]}
		for _, p := range strings.Split(m[2], ",") {
			p = strings.Join(strings.Fields(p), " ")
			if p == "" {
				continue
			}
			i := strings.LastIndexAny(p, " *")
			if i < 0 {
				return nil, fmt.Errorf("%s: kernel %s: parameter %q has no name", src, k.name, p)
			}
			ct := strings.TrimSpace(p[:i+1])
			ct = strings.ReplaceAll(ct, " *", "*")
			k.params = append(k.params, param{name: p[i+1:], ctype: ct})
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, fmt.Errorf("%s: no extern \"C\" kernels", src)
	}
	return ks, nil
}

// cSize is the size in bytes of a parameter's C type.
func cSize(ct string) (int, error) {
	if strings.HasSuffix(ct, "*") {
		return 8, nil
	}
	switch ct {
	case "int", "unsigned int", "unsigned", "float":
		return 4, nil
	case "i64", "long long", "u64", "unsigned long long", "double":
		return 8, nil
	}
	return 0, fmt.Errorf("unknown C type %q", ct)
}

var entryRE = regexp.MustCompile(`(?s)\.entry\s+(\w+)\s*\((.*?)\)\s*((?:\.\w+[^{]*?)?)\{`)
var ptxParamRE = regexp.MustCompile(`\.param\s+\.(\w+)\s+(?:\.align\s+\d+\s+)?\w+(\[(\d+)\])?`)

// matchPTX checks ks against the .entry list of a PTX text (names, order
// of parameters and their sizes) and reads each kernel's launch bounds.
func matchPTX(ks []*kernel, text, file string) error {
	byName := map[string]*kernel{}
	for _, k := range ks {
		if byName[k.name] != nil {
			return fmt.Errorf("%s: kernel %s declared twice", file, k.name)
		}
		byName[k.name] = k
	}
	seen := map[string]bool{}
	for _, m := range entryRE.FindAllStringSubmatch(text, -1) {
		name := m[1]
		k := byName[name]
		if k == nil {
			return fmt.Errorf("%s: .entry %s has no extern \"C\" declaration in ptx/src", file, name)
		}
		seen[name] = true
		ps := ptxParamRE.FindAllStringSubmatch(m[2], -1)
		if len(ps) != len(k.params) {
			return fmt.Errorf("%s: %s has %d parameters in the PTX, %d in C", file, name, len(ps), len(k.params))
		}
		for i, p := range ps {
			size := ptxSize(p[1])
			if p[3] != "" {
				n, _ := strconv.Atoi(p[3])
				size *= n
			}
			want, err := cSize(k.params[i].ctype)
			if err != nil {
				return fmt.Errorf("%s parameter %s: %w", name, k.params[i].name, err)
			}
			if size != want {
				return fmt.Errorf("%s: parameter %d (%s %s) of %s is %d bytes in the PTX, %d in C", file, i, k.params[i].ctype, k.params[i].name, name, size, want)
			}
		}
		dirs := m[3]
		if mm := regexp.MustCompile(`\.maxntid\s+(\d+)`).FindStringSubmatch(dirs); mm != nil {
			k.maxThreads, _ = strconv.Atoi(mm[1])
		}
		if mm := regexp.MustCompile(`\.minnctapersm\s+(\d+)`).FindStringSubmatch(dirs); mm != nil {
			k.minBlocks, _ = strconv.Atoi(mm[1])
		}
	}
	for _, k := range ks {
		if !seen[k.name] {
			return fmt.Errorf("%s: kernel %s of ptx/src is not in the PTX (regenerate it: go generate ./ptx)", file, k.name)
		}
	}
	return nil
}

func ptxSize(t string) int {
	n, _ := strconv.Atoi(strings.TrimLeft(t, "bsuf"))
	return n / 8
}

// A template parameter in a kernel name: p16, k2, s8, d24, segc4.
var tparamRE = regexp.MustCompile(`^(p|k|s|d|segc)(\d+)$`)

// families groups the kernels whose names differ only in the precision
// (f32, f64) and in template parameters, and checks that their
// parameters agree but for the element type.
func families(ks []*kernel) ([]*family, error) {
	byKey := map[string]*family{}
	var order []string
	for _, k := range ks {
		toks := strings.Split(k.name, "_")
		var fam []string
		var precs []string
		k.tparams = map[string]int{}
		var tnames []string
		for _, t := range toks {
			if t == "f32" || t == "f64" {
				precs = append(precs, t)
				fam = append(fam, "\x00")
				continue
			}
			if m := tparamRE.FindStringSubmatch(t); m != nil {
				v, _ := strconv.Atoi(m[2])
				k.tparams[m[1]] = v
				tnames = append(tnames, m[1])
				fam = append(fam, m[1])
				continue
			}
			fam = append(fam, t)
		}
		if len(precs) == 1 {
			k.prec = precs[0]
			var f []string
			for _, t := range fam {
				if t != "\x00" {
					f = append(f, t)
				}
			}
			fam = f
		} else {
			// vec_f64_to_f32: the precisions are part of the name.
			fam = nil
			for i, t := range toks {
				if m := tparamRE.FindStringSubmatch(t); m != nil {
					fam = append(fam, m[1])
					continue
				}
				_ = i
				fam = append(fam, t)
			}
		}
		k.family = strings.Join(fam, "_")
		f := byKey[k.family]
		if f == nil {
			f = &family{name: k.family, tnames: tnames}
			byKey[k.family] = f
			order = append(order, k.family)
		}
		f.kernels = append(f.kernels, k)
	}
	var fams []*family
	for _, key := range order {
		f := byKey[key]
		if err := f.unify(); err != nil {
			return nil, err
		}
		fams = append(fams, f)
	}
	return fams, nil
}

// family is a set of kernels launched alike.
type family struct {
	name    string
	tnames  []string // template parameters, in name order
	kernels []*kernel
	fields  []field
}

// field is a parameter of a family's launch: its Go name and type and,
// per kernel, the C type it is packed as.
type field struct {
	cname, goName, goType string
}

func (f *family) hasPrec() bool { return f.kernels[0].prec != "" }

func (f *family) unify() error {
	k0 := f.kernels[0]
	for _, k := range f.kernels {
		if len(k.params) != len(k0.params) {
			return fmt.Errorf("family %s: %s has %d parameters, %s %d", f.name, k.name, len(k.params), k0.name, len(k0.params))
		}
		if (k.prec == "") != (k0.prec == "") {
			return fmt.Errorf("family %s: %s and %s differ in naming their precision", f.name, k.name, k0.name)
		}
	}
	used := map[string]bool{}
	for i, p := range k0.params {
		gt := ""
		for _, k := range f.kernels {
			q := k.params[i]
			if q.name != p.name {
				return fmt.Errorf("family %s: parameter %d is %s in %s, %s in %s", f.name, i, q.name, k.name, p.name, k0.name)
			}
			t := goType(q.ctype)
			if gt == "" {
				gt = t
			} else if gt != t {
				if (gt == "float32" || gt == "float64") && (t == "float32" || t == "float64") {
					gt = "float64" // the element type: packed as each kernel's C type
				} else {
					return fmt.Errorf("family %s: parameter %s is %s in %s and %s in %s", f.name, p.name, q.ctype, k.name, p.ctype, k0.name)
				}
			}
		}
		gn := exported(p.name)
		for used[gn] {
			gn += "_"
		}
		used[gn] = true
		f.fields = append(f.fields, field{cname: p.name, goName: gn, goType: gt})
	}
	return nil
}

func goType(ct string) string {
	if strings.HasSuffix(ct, "*") {
		return "cu.DevicePtr"
	}
	switch ct {
	case "int":
		return "int32"
	case "unsigned int", "unsigned":
		return "uint32"
	case "i64", "long long":
		return "int64"
	case "u64", "unsigned long long":
		return "uint64"
	case "float":
		return "float32"
	case "double":
		return "float64"
	}
	panic("unknown C type " + ct)
}

// exported is a C identifier as an exported Go name: status → Status,
// es → ES for the two-letter strides, a2 → A2.
func exported(s string) string {
	parts := strings.Split(s, "_")
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if len(p) <= 2 {
			b.WriteString(strings.ToUpper(p))
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

// constName is the unexported constant of a kernel: partition_p16_f32 →
// partitionP16F32.
func constName(s string) string {
	g := goName(s)
	return strings.ToLower(g[:1]) + g[1:]
}

// goName is a kernel or family name in Go: partition_p16_f32 →
// PartitionP16F32.
func goName(s string) string {
	var b strings.Builder
	for _, p := range strings.Split(s, "_") {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}

const header = "// Code generated by go run ./gen (internal/gpu/kernels) from ptx/src and ptx/*.ptx. DO NOT EDIT.\n\n"

func tableFile(ks []*kernel) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("package kernels\n\n")
	b.WriteString("// The kernels of bandsolve's PTX modules.\nconst (\n")
	for i, k := range ks {
		if i == 0 {
			fmt.Fprintf(&b, "\t%s Kernel = iota\n", constName(k.name))
		} else {
			fmt.Fprintf(&b, "\t%s\n", constName(k.name))
		}
	}
	b.WriteString(")\n\n// table describes every kernel, indexed by Kernel.\nvar table = [...]Info{\n")
	for _, k := range ks {
		fmt.Fprintf(&b, "\t%s: {Name: %q, Module: %d, Family: %q, MaxThreads: %d, MinBlocks: %d, Params: []Param{", constName(k.name), k.name, k.module, k.family, k.maxThreads, k.minBlocks)
		for i, p := range k.params {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "{%q, %q}", p.name, p.ctype)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func familiesFile(fams []*family) string {
	var b strings.Builder
	b.WriteString(header)
	b.WriteString("package kernels\n\nimport \"fmt\"\n\n")
	for _, f := range fams {
		writeFamily(&b, f)
	}
	return b.String()
}

func launchFile(fams []*family) string {
	var b strings.Builder
	b.WriteString("//go:build cuda\n\n")
	b.WriteString(header)
	// Families with the same parameters (names and Go types) share one
	// Args type, that of the first of them, and an interface that any of
	// them satisfies, so that code choosing among them at run time fills
	// one struct and launches whichever it chose.
	primary := map[string]*family{}
	members := map[*family][]*family{}
	var classes []*family
	for _, f := range fams {
		key := f.signature()
		p := primary[key]
		if p == nil {
			primary[key] = f
			p = f
			classes = append(classes, f)
		}
		members[p] = append(members[p], f)
	}
	var body strings.Builder
	for _, f := range fams {
		writeLauncher(&body, f, primary[f.signature()])
	}
	for _, p := range classes {
		if ms := members[p]; len(ms) > 1 {
			writeLauncherInterface(&body, p, ms)
		}
	}
	imports := ""
	if strings.Contains(body.String(), "math.") {
		imports = "\t\"math\"\n\n"
	}
	b.WriteString("package kernels\n\nimport (\n" + imports + "\t\"gorgonia.org/cu\"\n\n\t\"github.com/bandsolve/bandsolve/cuda\"\n)\n\n")
	b.WriteString(body.String())
	return b.String()
}

// signature is the family's parameters as Go sees them.
func (f *family) signature() string {
	var parts []string
	for _, fl := range f.fields {
		parts = append(parts, fl.goName+" "+fl.goType)
	}
	return strings.Join(parts, ", ")
}

// writeLauncherInterface writes the interface of the families ms, which
// share the parameters of p.
func writeLauncherInterface(b *strings.Builder, p *family, ms []*family) {
	pn := goName(p.name)
	var names []string
	for _, m := range ms {
		names = append(names, goName(m.name))
	}
	fmt.Fprintf(b, "// %sLauncher is a kernel launched with %sArgs: %s.\n", pn, pn, strings.Join(names, ", "))
	fmt.Fprintf(b, "type %sLauncher interface {\n\tKernel() Kernel\n\tPack(a *%sArgs, slots []uint64)\n\tLaunch(dev *cuda.Device, grid, block cuda.Dim3, shmem int, s cu.Stream, a *%sArgs) error\n}\n\n", pn, pn, pn)
	b.WriteString("var (\n")
	for _, n := range names {
		fmt.Fprintf(b, "\t_ %sLauncher = %s{}\n", pn, n)
	}
	b.WriteString(")\n\n")
}

func (f *family) names() []string {
	var names []string
	for _, k := range f.kernels {
		names = append(names, k.name)
	}
	sort.Strings(names)
	return names
}

func (f *family) single() bool { return len(f.kernels) == 1 && len(f.tnames) == 0 && !f.hasPrec() }

// writeFamily writes a family's type, its selection by template values
// and precision, and its kernel (no build tag: package tuning and the CPU
// emulations may name kernels too).
func writeFamily(b *strings.Builder, f *family) {
	tn := goName(f.name)
	names := f.names()
	if f.single() {
		fmt.Fprintf(b, "// %s is the kernel %s (its zero value).\ntype %s struct{ k Kernel }\n\n", tn, names[0], tn)
		fmt.Fprintf(b, "// Kernel returns the kernel.\nfunc (f %s) Kernel() Kernel { return %s }\n\n", tn, constName(f.kernels[0].name))
		return
	}
	fmt.Fprintf(b, "// %s is a kernel of the family %s.\ntype %s struct{ k Kernel }\n\n", tn, strings.Join(names, ", "), tn)
	var args []string
	for _, t := range f.tnames {
		args = append(args, t+" int")
	}
	if f.hasPrec() {
		args = append(args, "f64 bool")
	}
	fmt.Fprintf(b, "// %sFor returns the kernel of the family for the given template\n// values (and precision), or an error wrapping ErrNoKernel.\n", tn)
	fmt.Fprintf(b, "func %sFor(%s) (%s, error) {\n", tn, strings.Join(args, ", "), tn)
	for _, k := range f.kernels {
		var conds []string
		for _, t := range f.tnames {
			conds = append(conds, fmt.Sprintf("%s == %d", t, k.tparams[t]))
		}
		if f.hasPrec() {
			if k.prec == "f64" {
				conds = append(conds, "f64")
			} else {
				conds = append(conds, "!f64")
			}
		}
		fmt.Fprintf(b, "\tif %s {\n\t\treturn %s{%s}, nil\n\t}\n", strings.Join(conds, " && "), tn, constName(k.name))
	}
	var fmtArgs, vals []string
	for _, t := range f.tnames {
		fmtArgs = append(fmtArgs, t+"=%d")
		vals = append(vals, t)
	}
	if f.hasPrec() {
		fmtArgs = append(fmtArgs, "f64=%t")
		vals = append(vals, "f64")
	}
	fmt.Fprintf(b, "\treturn %s{}, fmt.Errorf(\"%%w: %s with %s\", ErrNoKernel, %s)\n}\n\n", tn, f.name, strings.Join(fmtArgs, " "), strings.Join(vals, ", "))
	fmt.Fprintf(b, "// Kernel returns the kernel.\nfunc (f %s) Kernel() Kernel { return f.k }\n\n", tn)
}

// writeLauncher writes a family's arguments, their packing into launch
// slots and its launch (build tag cuda).
func writeLauncher(b *strings.Builder, f, primary *family) {
	tn := goName(f.name)
	if primary != f {
		pn := goName(primary.name)
		fmt.Fprintf(b, "// %sArgs are the parameters of %s: those of %s.\ntype %sArgs = %sArgs\n\n", tn, strings.Join(f.names(), ", "), pn, tn, pn)
	} else {
		fmt.Fprintf(b, "// %sArgs are the parameters of %s.\ntype %sArgs struct {\n", tn, strings.Join(f.names(), ", "), tn)
		for _, fl := range f.fields {
			fmt.Fprintf(b, "\t%s %s // %s\n", fl.goName, fl.goType, fl.cname)
		}
		b.WriteString("}\n\n")
	}
	n := len(f.fields)
	fmt.Fprintf(b, "// %sSlots is the number of launch slots of %s.\nconst %sSlots = %d\n\n", tn, tn, tn, n)
	fmt.Fprintf(b, "// Pack puts a in slots[:%sSlots] as the kernel's C types, for\n// cuda.Device.LaunchDirect.\n", tn)
	fmt.Fprintf(b, "func (f %s) Pack(a *%sArgs, slots []uint64) {\n", tn, tn)
	if n > 0 {
		fmt.Fprintf(b, "\t_ = slots[%d]\n", n-1)
	}
	for i, fl := range f.fields {
		fmt.Fprintf(b, "\tslots[%d] = %s\n", i, pack(f, i, fl))
	}
	b.WriteString("}\n\n")
	fmt.Fprintf(b, "// Launch launches the kernel on stream s (inside dev.Enqueue or dev.Do).\n")
	fmt.Fprintf(b, "func (f %s) Launch(dev *cuda.Device, grid, block cuda.Dim3, shmem int, s cu.Stream, a *%sArgs) error {\n", tn, tn)
	fmt.Fprintf(b, "\tvar slots [%d]uint64\n", max(n, 1))
	fmt.Fprintf(b, "\tf.Pack(a, slots[:])\n")
	fmt.Fprintf(b, "\treturn dev.LaunchSlots(table[f.Kernel()].Name, grid, block, shmem, s, slots[:%d])\n}\n\n", n)
}

// pack is the Go expression that puts field i of a family's arguments in
// its 8-byte launch slot, as the kernel's C type.
func pack(f *family, i int, fl field) string {
	v := "a." + fl.goName
	switch fl.goType {
	case "cu.DevicePtr", "uint64":
		return "uint64(" + v + ")"
	case "int32":
		return "uint64(uint32(" + v + "))"
	case "uint32":
		return "uint64(" + v + ")"
	case "int64":
		return "uint64(" + v + ")"
	case "float32":
		return "uint64(math.Float32bits(" + v + "))"
	}
	// float64: float in the f32 kernels of the family, double in the others.
	return fmt.Sprintf("packFloat(table[f.Kernel()].Params[%d].CType, %s)", i, v)
}

func gofmt(src string) ([]byte, error) {
	b, err := format.Source([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("formatting generated code: %w\n%s", err, src)
	}
	return b, nil
}
