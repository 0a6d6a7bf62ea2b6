package reports

// MemoryStyle is how terminal tables show bytes: in Units (GiB by
// default, GB with --units gb) within 120 columns, or with Wide every
// column, exact bytes with thousands separators beside the human units.
type MemoryStyle struct {
	Units MemoryUnits
	Wide  bool
	// Replayed says a replay follows the table (zerosim run): its peak
	// decides whether the step fits, so the table's walked peak is
	// labelled the memory model's and carries no verdict of its own.
	Replayed bool
	// ReplayPeak is that replay's peak on the table's rank (zero.Result's
	// Memory.Peak), which the total row sets beside the walked one.
	ReplayPeak int64
	// Vendor is the GPU's maker, whose words the memory notes use (the
	// zero value, NVIDIA, unless the command sets it: VendorOf).
	Vendor Vendor
}

// bytes is one byte cell: exact with separators when wide, else human.
func (st MemoryStyle) bytes(b int64) string {
	if st.Wide {
		return commas(b)
	}
	return st.Units.format(b)
}

// maxColumns is the width terminal tables keep to without --wide.
const maxColumns = 120
