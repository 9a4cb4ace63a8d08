/* devtensor._core's shared part: the bound classes and helpers, the Front record, and the helpers every lane
 * uses (slot access, the handler test, the result wrap, the rules' helpers on an error). One translation unit:
 * _core.c includes this file, then _core_elementwise.h and _core_memo.h. */
#ifndef DEVTENSOR_CORE_COMMON_H
#define DEVTENSOR_CORE_COMMON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#ifndef DEVTENSOR_CORE_FINGERPRINT
#define DEVTENSOR_CORE_FINGERPRINT "unknown"
#endif

/* ---- set once by setup() ---- */
static PyTypeObject *Tensor_type = NULL;
static PyTypeObject *Storage_type = NULL;
static PyTypeObject *Device_type = NULL;
static Py_ssize_t off_array, off_device, off_storage, off_shape, off_dtype, off_checked;
static Py_ssize_t off_root, off_version, off_guard, off_key;
static PyObject *active_modes = NULL;   /* devtensor.modes.ACTIVE: a one-item list, nonzero while a mode is on */
static PyObject *alloc_failed = NULL;   /* rules.alloc_failed(name, spec, error, device): raises */
static PyObject *check_writable = NULL; /* rules.check_writable(name, arg, tensor): raises if not writable */
static PyObject *written_then_raised = NULL; /* rules.written_then_raised(tensor, array) */
static PyObject *kw_order = NULL, *kw_out = NULL, *str_C = NULL, *str_out = NULL, *str_self = NULL, *str_alpha = NULL;
static PyObject *zero = NULL, *one = NULL;
/* (attribute names read per call, interned once: a C string would be decoded and hashed on every call) */
static PyObject *str_dtype = NULL, *str_flags = NULL, *str_c_contiguous = NULL, *str_kind = NULL;
static int ready = 0;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* A tensor's record is whole: every field set, its device a Device, its storage a Storage record with its fields
 * set. The lanes read these fields unchecked, so a tensor made by object.__new__, or with a field deleted or
 * replaced behind devtensor's back, is no tensor to them: the Python front takes the call and fails on it as
 * Python code does (an AttributeError), where reading it would crash the process. */
static inline int intact(PyObject *o) {
    PyObject *d = SLOT(o, off_device), *s = SLOT(o, off_storage);
    return d != NULL && s != NULL && SLOT(o, off_array) != NULL && SLOT(o, off_shape) != NULL &&
           SLOT(o, off_dtype) != NULL && SLOT(o, off_checked) != NULL && PyObject_TypeCheck(d, Device_type) &&
           PyObject_TypeCheck(s, Storage_type) && SLOT(s, off_root) != NULL && SLOT(s, off_version) != NULL;
}

/* The last Tensor subclass seen and its version tag (the type's attribute cache tag): a type modified since (its
 * bases set again) loses the tag (PyType_Modified), so the subclass test is walked again only for another class or
 * a modified one. The type is held, so its address is not reused. */
static PyTypeObject *known_tensor_class = NULL;
static unsigned int known_tensor_tag = 0;

static inline int valid_tag(PyTypeObject *t) {
    return (t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG) && t->tp_version_tag != 0;
}

static inline int tensor_class(PyTypeObject *t) {
    if (t == known_tensor_class && t->tp_version_tag == known_tensor_tag && valid_tag(t)) return 1;
    if (t != Tensor_type && !PyType_IsSubtype(t, Tensor_type)) return 0;
    if (valid_tag(t)) {
        Py_INCREF(t);
        Py_XSETREF(known_tensor_class, t);
        known_tensor_tag = t->tp_version_tag;
    }
    return 1;
}

/* A Tensor the lanes may read (intact). */
static inline int is_tensor(PyObject *o) { return tensor_class(Py_TYPE(o)) && intact(o); }

/* FORWARD: no lane, every call goes to the Python front. UNARY, BINARY: the elementwise lanes. The MEMO_* kinds
 * (devtensor.structured.tables.memo_lane): a functional call whose meta result the op's memo holds and whose
 * direct call allocates the result. */
enum { FORWARD = 0, UNARY = 1, BINARY = 2, MEMO_REDUCE = 3, MEMO_INT = 4, MEMO_ARRAYS = 5, MEMO_SCALARS = 6, MEMO_LIST = 7,
       UNARY_CALL = 8, VIEW = 9 };
/* REFLECTED: a binary functional front called as a reflected operator (2 - t is sub(2, t)) */
enum { FUNCTIONAL = 1, INPLACE = 2, REFLECTED = 3 };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;
    PyObject *weakrefs;
    PyObject *python;     /* the Python front: every call the lanes do not take; NULL until first needed */
    PyObject *builder;    /* builder() -> the Python front (called once, on the first call the lanes leave) */
    PyObject *name;       /* the op's name as errors give it ("add", "add_") */
    PyObject *entries;    /* BINARY: the inline meta entries (list of tuples); UNARY: dtype -> result dtype */
    PyObject *direct;     /* (the built-in kernel, the ufunc, ...) */
    PyObject *handlers;   /* the op's KernelTable.handlers: key -> handler */
    PyObject *specs;      /* MEMO_*: the meta's memo of results (meta.SHAPE_MEMO), read as the Python front does */
    PyObject *defaults;   /* MEMO_REDUCE: (has a dim default, dim's, keepdim's); MEMO_SCALARS: the numbers' */
    PyObject *last_key;   /* MEMO_*: the key looked up last and its spec (a spec is a pure function of its key) */
    PyObject *last_spec;
    PyObject *last_type;  /* the tensor class last seen by a MEMO lane, and its backend's tensor_class */
    PyObject *last_class;
    PyTypeObject *bound_class; /* a device binding's (devtensor.cpu.add): tensors of exactly this class; else NULL */
    PyObject *bound_key;       /* and its dispatch key (the handler is looked up for it); else NULL */
    PyObject *general;    /* the general lane's table (devtensor.structured.core.general_table); NULL: none */
    PyObject *general_maker; /* or, until the first call that needs it, the callable that makes it (import: no table) */
    PyObject *g_type;     /* the tensor class the general (view) lane saw last, its backend's alloc (xp), tensor_class */
    PyObject *g_alloc;
    PyObject *g_class;
    int arity;
    int variant;
    int fresh;            /* MEMO_*: meta.FRESH_C (0: the result's layout is tested) */
} Front;

/* A fresh field value v of slot off of obj (steals v). */
static inline void set_slot(PyObject *obj, Py_ssize_t off, PyObject *v) {
    PyObject *old = SLOT(obj, off);
    SLOT(obj, off) = v;
    Py_XDECREF(old);
}

static inline PyObject *direct_item(Front *f, Py_ssize_t i);

/* A tensor argument the front takes: any intact Tensor; a device binding's, exactly its refined class. */
static inline int is_tensor_of(Front *f, PyObject *o) {
    return f->bound_class != NULL ? Py_TYPE(o) == f->bound_class && intact(o) : is_tensor(o);
}

/* The handler cached for device's key (a binding's own key) is the op's built-in direct kernel, and the device has no
 * guard. */
static int plain_device(Front *f, PyObject *device) {
    PyObject *guard = SLOT(device, off_guard);
    if (guard != Py_None) return 0;
    PyObject *key = f->bound_key != NULL ? f->bound_key : SLOT(device, off_key);
    if (key == NULL) return 0;
    PyObject *handler = PyDict_GetItemWithError(f->handlers, key); /* borrowed */
    if (handler == NULL) {
        PyErr_Clear();
        return 0;
    }
    return handler == direct_item(f, 0);
}

/* A Python number the entry accepts as it is: entry[type_at] is its exact type, float, or int within the entry's
 * window (entry[3] false, or entry[5] <= value <= entry[6]). -1 on an error. */
static int scalar_fits(PyObject *entry, Py_ssize_t type_at, PyObject *value) {
    PyObject *t = PyTuple_GET_ITEM(entry, type_at);
    if ((PyObject *)Py_TYPE(value) != t) return 0;
    if (t == (PyObject *)&PyFloat_Type) return 1;
    if (t != (PyObject *)&PyLong_Type) return 0;
    int windowed = PyObject_IsTrue(PyTuple_GET_ITEM(entry, 3));
    if (windowed <= 0) return windowed == 0 ? 1 : -1;
    int lo = PyObject_RichCompareBool(PyTuple_GET_ITEM(entry, 5), value, Py_LE);
    if (lo <= 0) return lo;
    return PyObject_RichCompareBool(value, PyTuple_GET_ITEM(entry, 6), Py_LE);
}

/* entries[i] when it is a tuple of at least n items, else NULL (no lane). Borrowed. */
static inline PyObject *entry_at(PyObject *entries, Py_ssize_t i, Py_ssize_t n) {
    if (!PyList_Check(entries) || PyList_GET_SIZE(entries) <= i) return NULL;
    PyObject *e = PyList_GET_ITEM(entries, i);
    return (PyTuple_Check(e) && PyTuple_GET_SIZE(e) >= n) ? e : NULL;
}

static inline int same_shape(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    if (PyTuple_CheckExact(a) && PyTuple_CheckExact(b)) { /* (the tensors' shapes: tuples of ints) */
        Py_ssize_t n = PyTuple_GET_SIZE(a);
        if (n != PyTuple_GET_SIZE(b)) return 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *x = PyTuple_GET_ITEM(a, i), *y = PyTuple_GET_ITEM(b, i);
            if (x != y) { /* (sizes up to 256 are the same object) */
                int eq = PyObject_RichCompareBool(x, y, Py_EQ);
                if (eq <= 0) return eq;
            }
        }
        return 1;
    }
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* The ufunc's result for a functional call: NumPy allocates; C order for 2 or more dims over 1 (any other shape is
 * C order anyway, and NumPy's order="C" takes another loop for all-size-1 ones, which rounds complex products
 * otherwise than a*b does); an array (not a scalar) for 0-d results, as the Python front's lane asks. */
static PyObject *call_allocating(PyObject *ufunc, PyObject **argv, Py_ssize_t n, PyObject *shape) {
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape), ones = 0;
    PyObject *args[3];
    for (Py_ssize_t i = 0; i < n; i++) args[i] = argv[i];
    for (Py_ssize_t i = 0; i < ndim; i++) ones += PyTuple_GET_ITEM(shape, i) == one;
    if (ndim == 1 || (ndim && ones >= ndim - 1)) return PyObject_Vectorcall(ufunc, args, n, NULL);
    args[n] = ndim ? str_C : Py_Ellipsis;
    return PyObject_Vectorcall(ufunc, args, n, ndim ? kw_order : kw_out);
}

/* A fresh tensor of class cls over array (as the Python lane makes it: a new Storage record, version 0, checked
 * writable). Steals array. */
static PyObject *wrap(PyTypeObject *cls, PyObject *array, PyObject *device, PyObject *shape, PyObject *dtype) {
    PyObject *storage = Storage_type->tp_alloc(Storage_type, 0);
    if (storage == NULL) {
        Py_DECREF(array);
        return NULL;
    }
    PyObject *result = cls->tp_alloc(cls, 0);
    if (result == NULL) {
        Py_DECREF(storage);
        Py_DECREF(array);
        return NULL;
    }
    Py_INCREF(array);
    set_slot(storage, off_root, array);
    Py_INCREF(zero);
    set_slot(storage, off_version, zero);
    set_slot(result, off_array, array);
    Py_INCREF(device);
    set_slot(result, off_device, device);
    set_slot(result, off_storage, storage);
    Py_INCREF(shape);
    set_slot(result, off_shape, shape);
    Py_INCREF(dtype);
    set_slot(result, off_dtype, dtype);
    Py_INCREF(Py_True);
    set_slot(result, off_checked, Py_True);
    return result;
}

/* The error being raised, taken out (owned by the caller) and normalized, its traceback kept on the value. */
static void fetch_error(PyObject **type, PyObject **value, PyObject **tb) {
    PyErr_Fetch(type, value, tb);
    PyErr_NormalizeException(type, value, tb);
    if (*tb != NULL) PyException_SetTraceback(*value, *tb);
}

/* After a rules helper ran on the error (type, value, tb) that fetch_error took (stolen here): r, the helper's
 * result, non-NULL: the original error is raised again; NULL: the helper's own error is raised, carrying the original
 * as __context__, as an except clause in the Python front makes it. Returns NULL. */
static PyObject *raise_after(PyObject *r, PyObject *type, PyObject *value, PyObject *tb) {
    if (r != NULL) {
        Py_DECREF(r);
        PyErr_Restore(type, value, tb);
        return NULL;
    }
    PyObject *t2, *v2, *tb2;
    fetch_error(&t2, &v2, &tb2);
    PyException_SetContext(v2, value); /* steals value */
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyErr_Restore(t2, v2, tb2);
    return NULL;
}

/* The allocating call failed: a ValueError or MemoryError is the allocating path's error (rules.alloc_failed
 * raises it, naming the op, shape, dtype and device); anything else propagates. */
static PyObject *allocation_error(Front *f, PyObject *spec, PyObject *device) {
    if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_MemoryError)) return NULL;
    PyObject *type, *value, *tb;
    fetch_error(&type, &value, &tb);
    PyObject *r = PyObject_CallFunctionObjArgs(alloc_failed, f->name, spec, value, device, NULL);
    Py_XDECREF(r);
    if (r != NULL) PyErr_Restore(type, value, tb); /* (it always raises; keep the original if it did not) */
    else {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
    return NULL;
}

/* allocation_error for the spec (shape, dtype), as the elementwise lanes know it. */
static PyObject *allocation_error_of(Front *f, PyObject *shape, PyObject *dtype, PyObject *device) {
    if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_MemoryError)) return NULL;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *spec = PyTuple_Pack(2, shape, dtype);
    if (spec == NULL) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
    allocation_error(f, spec, device);
    Py_DECREF(spec);
    return NULL;
}

/* A write into target's array (an out or an inplace self named arg) raised: a ValueError is checked into the
 * read-only error first (rules.check_writable); a floating-point condition made an error leaves the result
 * written and the version bumped (rules.written_then_raised). The original error is raised again unless the
 * check raised its own, which then carries it as __context__, as in the Python front. */
static PyObject *write_error(Front *f, PyObject *arg, PyObject *target) {
    PyObject *type, *value, *tb;
    int is_value = PyErr_ExceptionMatches(PyExc_ValueError);
    int is_condition = PyErr_ExceptionMatches(PyExc_Warning) || PyErr_ExceptionMatches(PyExc_FloatingPointError);
    if (!is_value && !is_condition) return NULL;
    fetch_error(&type, &value, &tb);
    PyObject *r;
    if (is_value) r = PyObject_CallFunctionObjArgs(check_writable, f->name, arg, target, NULL);
    else r = PyObject_CallFunctionObjArgs(written_then_raised, target, SLOT(target, off_array), NULL);
    return raise_after(r, type, value, tb);
}

/* An alpha= the lanes take (the Python front's cached-spec test): a Python float, for a floating-point or complex
 * result dtype. -1 on an error. */
static int alpha_fits(PyObject *alpha, PyObject *result_dtype) {
    if (!PyFloat_CheckExact(alpha)) return 0;
    PyObject *kind = PyObject_GetAttr(result_dtype, str_kind);
    if (kind == NULL) return -1;
    int fits = PyUnicode_CompareWithASCIIString(kind, "f") == 0 || PyUnicode_CompareWithASCIIString(kind, "c") == 0;
    Py_DECREF(kind);
    return fits;
}

/* np.maximum and np.minimum, whose out NumPy 2.4 wants as a keyword (a positional one is deprecated); set at import. */
static PyObject *keyword_out_ufuncs[2] = {NULL, NULL};

/* The write into target_array: the ufunc (its out positionally, which NumPy parses faster than out=, except for
 * keyword_out_ufuncs), or with alpha direct[2](a, b, alpha, out), the op's two steps with the floating-point
 * conditions reported after the write (as the Python front calls it). */
static PyObject *write_call(PyObject *ufunc, PyObject *scaled, PyObject *a, PyObject *b, PyObject *alpha,
                            PyObject *target_array) {
    if (alpha == NULL) {
        PyObject *args[3] = {a, b, target_array};
        int keyword = ufunc == keyword_out_ufuncs[0] || ufunc == keyword_out_ufuncs[1];
        return PyObject_Vectorcall(ufunc, args, keyword ? 2 : 3, keyword ? kw_out : NULL);
    }
    PyObject *args[4] = {a, b, alpha, target_array};
    return PyObject_Vectorcall(scaled, args, 4, NULL);
}

/* version += 1 on target's storage record. */
static int bump(PyObject *target) {
    PyObject *storage = SLOT(target, off_storage);
    PyObject *version = storage ? SLOT(storage, off_version) : NULL;
    if (version == NULL) {
        PyErr_SetString(PyExc_AttributeError, "version");
        return -1;
    }
    PyObject *next = PyNumber_Add(version, one);
    if (next == NULL) return -1;
    set_slot(storage, off_version, next);
    return 0;
}

#define FALLBACK ((PyObject *)1)

/* direct[i] (a list or tuple: the built-in kernel, the ufunc, ...), borrowed; NULL when it has no such item. */
static inline PyObject *direct_item(Front *f, Py_ssize_t i) {
    PyObject *d = f->direct;
    if (PyList_Check(d)) return PyList_GET_SIZE(d) > i ? PyList_GET_ITEM(d, i) : NULL;
    if (PyTuple_Check(d)) return PyTuple_GET_SIZE(d) > i ? PyTuple_GET_ITEM(d, i) : NULL;
    return NULL;
}



#endif
