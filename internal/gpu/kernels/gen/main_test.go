package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ptxText = `
.visible .entry scale_f32(
	.param .u64 scale_f32_param_0,
	.param .f32 scale_f32_param_1,
	.param .u32 scale_f32_param_2
)
.maxntid 256, 1, 1
.minnctapersm 2
{
	ret;
}
`

func kernelsOf(ctypes ...string) []*kernel {
	k := &kernel{name: "scale_f32"}
	for i, ct := range ctypes {
		k.params = append(k.params, param{name: string(rune('a' + i)), ctype: ct})
	}
	return []*kernel{k}
}

// A declaration that agrees with the PTX gets its launch bounds; one
// whose parameters differ in number or size, or a kernel missing on
// either side, is an error.
func TestMatchPTX(t *testing.T) {
	ks := kernelsOf("float*", "float", "int")
	require.NoError(t, matchPTX(ks, ptxText, "x.ptx"))
	assert.Equal(t, 256, ks[0].maxThreads)
	assert.Equal(t, 2, ks[0].minBlocks)

	assert.ErrorContains(t, matchPTX(kernelsOf("float*", "double", "int"), ptxText, "x.ptx"), "is 4 bytes in the PTX, 8 in C")
	assert.ErrorContains(t, matchPTX(kernelsOf("float*", "float"), ptxText, "x.ptx"), "3 parameters in the PTX, 2 in C")
	other := kernelsOf("float*", "float", "int")
	other[0].name = "scale_f64"
	assert.ErrorContains(t, matchPTX(other, ptxText, "x.ptx"), "has no extern \"C\" declaration")
	extra := append(kernelsOf("float*", "float", "int"), &kernel{name: "gone"})
	assert.ErrorContains(t, matchPTX(extra, ptxText, "x.ptx"), "gone of ptx/src is not in the PTX")
}

// Families: the precision and the template values leave the name; a
// family whose members disagree on a parameter is an error.
func TestFamilies(t *testing.T) {
	mk := func(name string, ctypes ...string) *kernel {
		k := &kernel{name: name}
		for i, ct := range ctypes {
			k.params = append(k.params, param{name: string(rune('a' + i)), ctype: ct})
		}
		return k
	}
	fams, err := families([]*kernel{
		mk("part_p4_f32", "float*", "float"), mk("part_p8_f32", "float*", "float"), mk("part_p4_f64", "double*", "double"),
		mk("vec_f64_to_f32", "const double*", "float*"), mk("tpr_stage1_f32", "int"),
	})
	require.NoError(t, err)
	require.Len(t, fams, 3)
	assert.Equal(t, "part_p", fams[0].name)
	assert.Equal(t, []string{"p"}, fams[0].tnames)
	assert.Equal(t, "float64", fams[0].fields[1].goType, "the element type in both precisions")
	assert.Equal(t, "vec_f64_to_f32", fams[1].name)
	assert.Equal(t, "tpr_stage1", fams[2].name, "stage1 is part of the name, not a template value")

	_, err = families([]*kernel{mk("part_p4_f32", "float*", "int"), mk("part_p8_f32", "float*", "i64")})
	assert.ErrorContains(t, err, "parameter b is")
}
