package reports

import (
	"fmt"

	"github.com/zerosim/zerosim/collectives"
	"github.com/zerosim/zerosim/memory"
	"github.com/zerosim/zerosim/scenarios"
	"github.com/zerosim/zerosim/topology"
)

// Vendor is the maker of the GPU a report describes. The words for its
// runtime context, its collectives library, its device monitor and its
// intra-node links follow it: an MI300X run read "CUDA context", "NCCL's
// buffers", "nvidia-smi" and "nvlink wire" (QA11 #7).
type Vendor int

const (
	// NVIDIA is the zero value: CUDA context, NCCL, nvidia-smi, NVLink.
	NVIDIA Vendor = iota
	// AMD: HIP context, RCCL, rocm-smi, xGMI (Infinity Fabric).
	AMD
)

// VendorOf is the vendor of the GPU preset gpu: AMD for the GPUs whose
// collectives RCCL's model chooses (collectives.RCCLArch: MI300X, MI325X,
// MI350X, MI355X), NVIDIA for any other. ClusterVendor also knows a GPU
// described by its figures with cluster.gfx.
func VendorOf(gpu string) Vendor {
	if collectives.RCCLArch(gpu) != "" {
		return AMD
	}
	return NVIDIA
}

// ClusterVendor is the vendor of c's GPU: AMD for an AMD preset or a GPU
// that cluster.gfx names AMD's (scenarios.Cluster.AMD), NVIDIA otherwise.
func ClusterVendor(c *scenarios.Cluster) Vendor {
	if c.AMD() {
		return AMD
	}
	return NVIDIA
}

// context is the GPU runtime's per-process context, which the device
// holds beside the allocator's memory.
func (v Vendor) context() string {
	if v == AMD {
		return "HIP context"
	}
	return "CUDA context"
}

// lib is the collectives library: RCCL is AMD's port of NCCL.
func (v Vendor) lib() string {
	if v == AMD {
		return "RCCL"
	}
	return "NCCL"
}

// compName is a memory component's row label in vendor v's words: on
// AMD the collectives' buffers are RCCL's ("rccl buffers", as the note
// under the table says). CSV and JSON keep memory.CompNCCL's name.
func (v Vendor) compName(name string) string {
	if v == AMD && name == string(memory.CompNCCL) {
		return "rccl buffers"
	}
	return name
}

// contextSource says where a profiler line's runtime context comes from
// when the vendor has no figure of its own: on AMD without
// memory.runtime_context (given false), memory.DefaultCUDAContext, the
// CUDA figure (pytorch/pytorch#109888), taken for HIP's: no published
// ROCm figure was found (vllm-project/vllm#43236 only says ROCm's start-up
// overhead is larger than CUDA's). "" otherwise.
func (v Vendor) contextSource(given bool) string {
	if v != AMD || given {
		return ""
	}
	return fmt.Sprintf("; the HIP context is CUDA's %d MB, no ROCm figure being found: memory.runtime_context sets yours", memory.DefaultCUDAContext/1_000_000)
}

// extras is what the device holds outside the caching allocator, in
// prose: "the CUDA context and NCCL's buffers" (the HIP context and RCCL's
// on AMD).
func (v Vendor) extras() string { return "the " + v.context() + " and " + v.lib() + "'s buffers" }

// smi is the tool that shows a GPU's device memory: rocm-smi's "VRAM Total
// Used Memory" on AMD, as scenarios/presets.go reads its total.
func (v Vendor) smi() string {
	if v == AMD {
		return "rocm-smi"
	}
	return "nvidia-smi"
}

// ClassName names a link class in a table or a note: the intra-node class
// is xGMI on AMD's platforms (the xGMI link preset), NVLink's name
// otherwise (topology.Class's, the JSON keys' on either vendor).
func (v Vendor) ClassName(c topology.Class) string {
	if v == AMD && c == topology.Intra {
		return "xgmi"
	}
	return c.String()
}

// classKey is ClassName of the class whose key (topology.Class's name,
// as JSON rows carry it) is key; other keys are kept.
func (v Vendor) classKey(key string) string {
	if key == topology.Intra.String() {
		return v.ClassName(topology.Intra)
	}
	return key
}

// link is the intra-node link's name in prose: xGMI on AMD's platforms,
// NVLink otherwise.
func (v Vendor) link() string {
	if v == AMD {
		return "xGMI"
	}
	return "NVLink"
}

// vendor is the vendor of the run's GPU.
func (run *Run) vendor() Vendor { return ClusterVendor(&run.Scenario.Cluster) }
