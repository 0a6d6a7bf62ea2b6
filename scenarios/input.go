package scenarios

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// Stdin names standard input in messages.
const Stdin = "<stdin>"

// Input is the text of one scenario and the name its errors give it.
type Input struct {
	File string
	Data []byte
}

// Load loads the input with the --set overrides sets.
func (in Input) Load(sets []string) (*Scenario, error) { return Load(in.File, in.Data, sets) }

// ReadInput reads the scenario a command names: "" is the default example,
// "-" stdin, an existing path that file, and any other name the embedded
// example of that name (see ExampleNames). Reads stop after MaxFileSize
// bytes (ReadLimited). Errors are *Error.
func ReadInput(arg string, stdin io.Reader) (Input, error) {
	switch arg {
	case "":
		data, _ := Example(DefaultExample)
		return Input{File: DefaultExample + ".yaml", Data: data}, nil
	case "-":
		data, err := ReadLimited(Stdin, stdin)
		if err != nil {
			return Input{}, err
		}
		return Input{File: Stdin, Data: data}, nil
	}
	f, err := os.Open(arg)
	if err == nil {
		defer f.Close()
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			err = syscall.EISDIR
		} else {
			data, err := ReadLimited(arg, f)
			if err != nil {
				return Input{}, err
			}
			return Input{File: arg, Data: data}, nil
		}
	}
	if errors.Is(err, fs.ErrNotExist) {
		// An embedded example, by its name or as reports name it
		// (NAME.yaml: compare's and sweep's headers, error messages).
		name := strings.TrimSuffix(arg, ".yaml")
		if ex, ok := Example(name); ok {
			return Input{File: name + ".yaml", Data: ex}, nil
		}
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	if errors.Is(err, fs.ErrNotExist) {
		if near := nearExample(arg); near != "" {
			// "defualt": the list of examples was the only hint.
			return Input{}, &Error{File: arg, Msg: "cannot read the file: " + msg + " (did you mean the embedded example " + near + "? otherwise check the path)"}
		}
	}
	return Input{}, &Error{File: arg, Msg: "cannot read the file: " + msg + " (check the path, or name an embedded example: zerosim scenarios)"}
}
