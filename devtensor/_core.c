/* devtensor._core: the compiled lanes of the structured fronts (the kinds' lanes, then the general lane).
 *
 * A Front wraps the Python front of one elementwise op variant (devtensor.structured.fronts.generate_front) and
 * takes the commonest calls without leaving C: no dispatch mode, tensors of one device with no guard, the meta
 * answer found in the op's inline entries (the same tuples and dict the Python front reads), the built-in kernel
 * as the handler, and no out= or an out= / inplace self that fits exactly. Every other call, and every call whose
 * answer is not settled by those tests, goes to the Python front unchanged (vectorcall forwarding: same
 * arguments, same keywords), which applies the rules (devtensor.structured.rules) in full. The lanes mirror the
 * Python fronts' own lanes test for test; tests/test_compiled_core.py runs the op samples through both.
 *
 * Tensor and Storage fields are read and written through their __slots__ offsets, found at setup() from the
 * classes' member descriptors, so this file never names a field's position.
 */
#include "_core_common.h"
#include "_core_elementwise.h"
#include "_core_memo.h"
#include "_core_general.h"
#include "_core_view.h"
#include "_core_softmax.h"
#include "_core_entry.h"


/* The Python front, built on first need (borrowed). Under the GIL: a second thread asking while the builder runs
 * may build it too; the first one stored wins and the other is dropped (the fronts are pure functions of the op). */
static PyObject *python_front(Front *f) {
    if (f->python != NULL) return f->python;
    PyObject *fn = PyObject_CallNoArgs(f->builder);
    if (fn == NULL) return NULL;
    if (f->python == NULL) f->python = fn;
    else Py_DECREF(fn);
    return f->python;
}

static int front_set_general(Front *f, PyObject *value, void *closure);

/* The general table made by its maker, on the first call that needs it (once; the maker is dropped). -1 on an
 * error. */
static int make_general(Front *f) {
    PyObject *maker = f->general_maker;
    if (maker == NULL) return 0;
    f->general_maker = NULL;
    PyObject *table = PyObject_CallNoArgs(maker);
    int r = table == NULL ? -1 : front_set_general(f, table, NULL);
    Py_XDECREF(table);
    if (r < 0) f->general_maker = maker; /* (kept: the next call raises the same) */
    else Py_DECREF(maker);
    return r;
}

static PyObject *front_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Front *f = (Front *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *r = FALLBACK;
    PyObject *flag = ready ? PyList_GET_ITEM(active_modes, 0) : NULL;
    /* (a mode on, in any thread: the Python front hands the call to the modes) */
    int modes_off = flag != NULL && (flag == zero || (PyLong_CheckExact(flag) && PyLong_AsLong(flag) == 0));
    PyObject *ufunc = f->arity == FORWARD ? NULL : direct_item(f, 1);
    if (modes_off && ufunc != NULL && ufunc != Py_None && direct_item(f, 0) != NULL) {
        PyObject *out = NULL, *alpha = NULL;
        int plain = 1;
        /* keywords the lanes take: out= (functional variants), alpha= (ops with alpha: direct[2] exists) */
        for (Py_ssize_t i = 0; plain && kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *k = PyTuple_GET_ITEM(kwnames, i), *v = args[nargs + i];
            if (f->variant == FUNCTIONAL && (k == str_out || PyUnicode_Compare(k, str_out) == 0)) {
                out = v == Py_None ? NULL : v;
                plain = out == NULL || is_tensor_of(f, out);
            } else if (f->arity == BINARY && direct_item(f, 2) != NULL &&
                       (k == str_alpha || PyUnicode_Compare(k, str_alpha) == 0)) {
                alpha = v;
            } else {
                plain = 0;
            }
        }
        if (alpha != NULL && f->variant == FUNCTIONAL && out == NULL) plain = 0; /* (the Python front's two steps) */
        if (plain && f->arity == UNARY_CALL) {
            if (out == NULL && f->variant == FUNCTIONAL && nargs == 1) r = unary_call_functional(f, args[0]);
        } else if (plain && f->arity >= MEMO_REDUCE) {
            if (f->variant == FUNCTIONAL && (out == NULL || f->arity != MEMO_LIST))
                r = f->arity == MEMO_LIST ? list_functional(f, args, nargs) : memo_functional(f, args, nargs, out);
        } else if (plain && f->arity != FORWARD) {
            if (f->arity == BINARY && nargs == 2) {
                if (f->variant == REFLECTED) {
                    if (out == NULL && alpha == NULL) r = binary_functional(f, args[1], args[0], NULL, NULL);
                } else {
                    r = f->variant == FUNCTIONAL ? binary_functional(f, args[0], args[1], out, alpha)
                                                 : binary_inplace(f, args[0], args[1], alpha);
                }
            } else if (f->arity == UNARY && nargs == 1) {
                r = f->variant == FUNCTIONAL ? unary_functional(f, args[0], out) : unary_inplace(f, args[0]);
            }
        }
    }
    if (f->arity == VIEW && modes_off && general_ready) r = view_call(f, args, nargs, kwnames);
    /* (any call the kind's lane left: the general lane, from the op's tables) */
    if (r == FALLBACK && modes_off && general_ready && f->variant != REFLECTED) {
        if (f->general_maker != NULL && make_general(f) < 0) return NULL;
        if (f->general != NULL) r = general_call(f, args, nargs, kwnames);
    }
    if (r != FALLBACK) return r;
    PyObject *python = python_front(f);
    if (python == NULL) return NULL;
    if (f->variant == REFLECTED) {
        /* the operator's operands, swapped (a reflected operator is called with exactly two) */
        if (nargs != 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
            PyErr_SetString(PyExc_TypeError, "a reflected operator takes exactly two operands");
            return NULL;
        }
        PyObject *swapped[2] = {args[1], args[0]};
        return PyObject_Vectorcall(python, swapped, 2, NULL);
    }
    return PyObject_Vectorcall(python, args, nargsf, kwnames);
}

static PyObject *front_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    return PyVectorcall_Call(self, args, kwargs);
}

/* Front(builder, name, arity, variant, entries, direct, handlers, specs=None, defaults=(), fresh=0, bound=None):
 * builder() makes the Python front; bound, a device binding's (refined class, dispatch key). */
static PyObject *front_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *builder, *name, *entries, *direct, *handlers, *specs = Py_None, *defaults = NULL, *bound = Py_None;
    int arity, variant, fresh = 0;
    if (!PyArg_ParseTuple(args, "OUiiOOO!|OO!iO:Front", &builder, &name, &arity, &variant, &entries, &direct,
                          &PyDict_Type, &handlers, &specs, &PyTuple_Type, &defaults, &fresh, &bound))
        return NULL;
    if (bound != Py_None &&
        !(PyTuple_Check(bound) && PyTuple_GET_SIZE(bound) == 2 && PyType_Check(PyTuple_GET_ITEM(bound, 0)))) {
        PyErr_SetString(PyExc_TypeError, "Front: bound must be None or (refined class, dispatch key)");
        return NULL;
    }
    if (arity >= MEMO_REDUCE && arity <= MEMO_LIST && !PyDict_Check(specs)) {
        PyErr_SetString(PyExc_TypeError, "Front: a memo lane needs the meta's memo (a dict)");
        return NULL;
    }
    if (variant == REFLECTED && arity != BINARY) {
        PyErr_SetString(PyExc_ValueError, "Front: only a binary lane can be reflected");
        return NULL;
    }
    if (!PyCallable_Check(builder)) {
        PyErr_SetString(PyExc_TypeError, "Front: the builder of the Python front must be callable");
        return NULL;
    }
    if (arity < FORWARD || arity > VIEW || variant < FUNCTIONAL || variant > REFLECTED) {
        PyErr_SetString(PyExc_ValueError, "Front: unknown lane kind or variant");
        return NULL;
    }
    if (arity == VIEW && !(PyTuple_CheckExact(entries) && PyTuple_GET_SIZE(entries) == V_SIZE &&
                           PyTuple_CheckExact(PyTuple_GET_ITEM(entries, V_PARAMS)) &&
                           PyTuple_GET_SIZE(PyTuple_GET_ITEM(entries, V_PARAMS)) <= MAX_PARAMS &&
                           PyTuple_CheckExact(PyTuple_GET_ITEM(entries, V_META_KW)) &&
                           PyLong_CheckExact(PyTuple_GET_ITEM(entries, V_NPOS)) &&
                           (PyTuple_GET_ITEM(entries, V_RESHAPE) == Py_None ||
                            PyList_CheckExact(PyTuple_GET_ITEM(entries, V_RESHAPE))))) {
        PyErr_SetString(PyExc_TypeError, "Front: a view lane needs the op's view table (view_table)");
        return NULL;
    }
    if (arity == VIEW) {
        PyObject *params = PyTuple_GET_ITEM(entries, V_PARAMS);
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(params); i++) {
            PyObject *p = PyTuple_GET_ITEM(params, i);
            if (!PyTuple_CheckExact(p) || PyTuple_GET_SIZE(p) != 6 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(p, 0))) {
                PyErr_SetString(PyExc_TypeError, "Front: a view table's parameter is (name, category, kw_only, "
                                                 "optional, has_default, default)");
                return NULL;
            }
        }
    }
    if (arity != FORWARD && arity != VIEW && !((PyTuple_Check(direct) && PyTuple_GET_SIZE(direct) >= 2) ||
                              (PyList_Check(direct) && PyList_GET_SIZE(direct) >= 2))) {
        PyErr_SetString(PyExc_TypeError, "Front: direct must be a list or tuple (kernel, ufunc, ...)");
        return NULL;
    }
    Front *f = (Front *)type->tp_alloc(type, 0);
    if (f == NULL) return NULL;
    f->vectorcall = front_vectorcall;
    f->dict = PyDict_New();
    if (f->dict == NULL) {
        Py_DECREF(f);
        return NULL;
    }
    Py_INCREF(builder);
    f->builder = builder;
    Py_INCREF(name);
    f->name = name;
    Py_INCREF(entries);
    f->entries = entries;
    Py_INCREF(direct);
    f->direct = direct;
    Py_INCREF(handlers);
    f->handlers = handlers;
    Py_INCREF(specs);
    f->specs = specs;
    f->defaults = defaults != NULL ? defaults : PyTuple_New(0);
    if (defaults != NULL) Py_INCREF(defaults);
    if (f->defaults == NULL) {
        Py_DECREF(f);
        return NULL;
    }
    if (bound != Py_None) {
        f->bound_class = (PyTypeObject *)PyTuple_GET_ITEM(bound, 0);
        f->bound_key = PyTuple_GET_ITEM(bound, 1);
        Py_INCREF(f->bound_class);
        Py_INCREF(f->bound_key);
    }
    f->arity = arity;
    f->variant = variant;
    f->fresh = fresh;
    return (PyObject *)f;
}

static int front_traverse(Front *f, visitproc visit, void *arg) {
    Py_VISIT(f->dict);
    Py_VISIT(f->python);
    Py_VISIT(f->builder);
    Py_VISIT(f->name);
    Py_VISIT(f->entries);
    Py_VISIT(f->direct);
    Py_VISIT(f->handlers);
    Py_VISIT(f->specs);
    Py_VISIT(f->defaults);
    Py_VISIT(f->last_key);
    Py_VISIT(f->last_spec);
    Py_VISIT(f->last_type);
    Py_VISIT(f->bound_class);
    Py_VISIT(f->bound_key);
    Py_VISIT(f->last_class);
    Py_VISIT(f->general);
    Py_VISIT(f->general_maker);
    Py_VISIT(f->g_type);
    Py_VISIT(f->g_alloc);
    Py_VISIT(f->g_class);
    return 0;
}

static int front_clear(Front *f) {
    Py_CLEAR(f->dict);
    Py_CLEAR(f->python);
    Py_CLEAR(f->builder);
    Py_CLEAR(f->name);
    Py_CLEAR(f->entries);
    Py_CLEAR(f->direct);
    Py_CLEAR(f->handlers);
    Py_CLEAR(f->specs);
    Py_CLEAR(f->defaults);
    Py_CLEAR(f->last_key);
    Py_CLEAR(f->last_spec);
    Py_CLEAR(f->last_type);
    Py_CLEAR(f->bound_class);
    Py_CLEAR(f->bound_key);
    Py_CLEAR(f->last_class);
    Py_CLEAR(f->general);
    Py_CLEAR(f->general_maker);
    Py_CLEAR(f->g_type);
    Py_CLEAR(f->g_alloc);
    Py_CLEAR(f->g_class);
    return 0;
}

static void front_dealloc(Front *f) {
    PyObject_GC_UnTrack(f);
    if (f->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)f);
    front_clear(f);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

/* A front is a method of Tensor (t.add(x), t + x): bound as Python functions are. */
static PyObject *front_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static PyObject *front_repr(Front *f) {
    return PyUnicode_FromFormat("<compiled front %U>", f->name);
}

static PyObject *front_get_python(Front *f, void *closure) {
    PyObject *python = python_front(f);
    Py_XINCREF(python);
    return python;
}

static PyObject *front_is_built(Front *f, void *closure) { return PyBool_FromLong(f->python != NULL); }

static PyObject *front_get_general(Front *f, void *closure) {
    if (make_general(f) < 0) return NULL;
    return Py_NewRef(f->general ? f->general : Py_None);
}

/* The general lane's table: a tuple of G_SIZE items (devtensor.structured.core.general_table), None (no lane), or a
 * callable that makes one of those on the first call that needs it. */
static int front_set_general(Front *f, PyObject *value, void *closure) {
    if (value == NULL || value == Py_None) {
        Py_CLEAR(f->general);
        Py_CLEAR(f->general_maker);
        return 0;
    }
    if (!PyTuple_Check(value) && PyCallable_Check(value)) {
        Py_CLEAR(f->general);
        Py_INCREF(value);
        Py_XSETREF(f->general_maker, value);
        return 0;
    }
    if (!PyTuple_CheckExact(value) || PyTuple_GET_SIZE(value) != G_SIZE ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(value, G_PARAMS)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(value, G_PARAMS)) > MAX_PARAMS ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(value, G_VALUES)) || !PyTuple_CheckExact(PyTuple_GET_ITEM(value, G_META_KW)) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(value, G_KERNEL_KW)) || !PyLong_CheckExact(PyTuple_GET_ITEM(value, G_NPOS))) {
        PyErr_SetString(PyExc_TypeError, "Front: general must be None or the general lane's table (general_table)");
        return -1;
    }
    PyObject *params = PyTuple_GET_ITEM(value, G_PARAMS);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(params); i++) {
        PyObject *p = PyTuple_GET_ITEM(params, i);
        if (!PyTuple_CheckExact(p) || PyTuple_GET_SIZE(p) != 6 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(p, 0)) ||
            !PyLong_CheckExact(PyTuple_GET_ITEM(p, 1))) {
            PyErr_SetString(PyExc_TypeError, "Front: a general table's parameter is (name, category, kw_only, "
                                             "optional, has_default, default)");
            return -1;
        }
    }
    PyObject *checks = PyTuple_GET_ITEM(value, G_VALUES);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(checks); i++) {
        PyObject *c = PyTuple_GET_ITEM(checks, i);
        if (!PyTuple_CheckExact(c) || PyTuple_GET_SIZE(c) != 4 || !PyLong_CheckExact(PyTuple_GET_ITEM(c, 0)) ||
            PyLong_AsSsize_t(PyTuple_GET_ITEM(c, 0)) >= PyTuple_GET_SIZE(params)) {
            PyErr_SetString(PyExc_TypeError, "Front: a general table's value check is (index, optional, type, allowed)");
            return -1;
        }
    }
    Py_INCREF(value);
    Py_XSETREF(f->general, value);
    return 0;
}

/* Pickled by reference, as functions are: the name of the module attribute it is (devtensor.add). */
static PyObject *front_reduce(PyObject *self, PyObject *unused) { return PyObject_GetAttrString(self, "__qualname__"); }

static PyMethodDef front_methods[] = {
    {"__reduce__", front_reduce, METH_NOARGS, "pickled by reference (the module attribute of its name)"},
    {NULL},
};

static PyGetSetDef front_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {"__wrapped__", (getter)front_get_python, NULL, "the Python front this one forwards to (built if not yet)", NULL},
    {"python_built", (getter)front_is_built, NULL, "whether the Python front was built already", NULL},
    {"general", (getter)front_get_general, (setter)front_set_general,
     "the general lane's table, or None (set: a table, None, or a callable making one on first need)", NULL},
    {NULL},
};

static PyTypeObject Front_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "devtensor._core.Front",
    .tp_basicsize = sizeof(Front),
    .tp_dealloc = (destructor)front_dealloc,
    .tp_vectorcall_offset = offsetof(Front, vectorcall),
    .tp_repr = (reprfunc)front_repr,
    .tp_call = front_call,
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "A compiled front: the common case of one elementwise op variant in C, the rest in its Python front.",
    .tp_traverse = (traverseproc)front_traverse,
    .tp_clear = (inquiry)front_clear,
    .tp_weaklistoffset = offsetof(Front, weakrefs),
    .tp_getset = front_getset,
    .tp_methods = front_methods,
    .tp_descr_get = front_get,
    .tp_dictoffset = offsetof(Front, dict),
    .tp_new = front_new,
};

/* The offset of the __slots__ member `name` of cls. -1 with an error set. */
static Py_ssize_t slot_offset(PyTypeObject *cls, const char *name) {
    PyObject *d = PyDict_GetItemString(cls->tp_dict, name);
    if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "devtensor._core: %s.%s is not a slot", cls->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
    if (m->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "devtensor._core: %s.%s is not an object slot", cls->tp_name, name);
        return -1;
    }
    return m->offset;
}

/* setup(Tensor, Storage, Device, ACTIVE, alloc_failed, check_writable, written_then_raised) */
static PyObject *core_setup(PyObject *module, PyObject *args) {
    PyObject *tensor, *storage, *device;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OOO:setup", &PyType_Type, &tensor, &PyType_Type, &storage, &PyType_Type,
                          &device, &PyList_Type, &active_modes, &alloc_failed, &check_writable, &written_then_raised))
        return NULL;
    if (PyList_GET_SIZE(active_modes) != 1) {
        PyErr_SetString(PyExc_ValueError, "setup: ACTIVE must be a one-item list");
        return NULL;
    }
    PyTypeObject *t = (PyTypeObject *)tensor, *s = (PyTypeObject *)storage, *d = (PyTypeObject *)device;
    Py_CLEAR(known_tensor_class); /* (a subclass of the Tensor class bound before) */
    if ((off_array = slot_offset(t, "_array")) < 0 || (off_device = slot_offset(t, "_device")) < 0 ||
        (off_storage = slot_offset(t, "_storage")) < 0 || (off_shape = slot_offset(t, "_shape")) < 0 ||
        (off_dtype = slot_offset(t, "_dtype")) < 0 || (off_checked = slot_offset(t, "_write_checked")) < 0 ||
        (off_root = slot_offset(s, "root")) < 0 || (off_version = slot_offset(s, "version")) < 0 ||
        (off_guard = slot_offset(d, "_guard")) < 0 || (off_key = slot_offset(d, "key")) < 0)
        return NULL;
    Py_INCREF(tensor);
    Py_INCREF(storage);
    Py_INCREF(active_modes);
    Py_INCREF(alloc_failed);
    Py_INCREF(check_writable);
    Py_INCREF(written_then_raised);
    Py_INCREF(device);
    Tensor_type = t;
    Storage_type = s;
    Device_type = d;
    ready = 1;
    Py_RETURN_NONE;
}

/* setup_general(META_ONLY, ConstOut, _Built, InplaceOut, SCALAR_TYPES, SPEC_SHAPES, SPEC_DTYPES, PlannedSpec,
 *               prepare_out, prepare_inplace, finish_out, copy_back, complete_after_condition) */
static PyObject *core_setup_general(PyObject *module, PyObject *args) {
    PyObject *const_out, *built, *inplace;
    if (!ready) {
        PyErr_SetString(PyExc_RuntimeError, "setup_general: call setup first");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O!O!OOOOOO:setup_general", &meta_only, &PyType_Type, &const_out,
                          &PyType_Type, &built, &PyType_Type, &inplace, &PyFrozenSet_Type, &scalar_types, &PyDict_Type,
                          &spec_shapes, &PyFrozenSet_Type, &spec_dtypes, &planned_spec, &prepare_out, &prepare_inplace,
                          &finish_out, &copy_back, &complete_after))
        return NULL;
    if ((off_const_array = slot_offset((PyTypeObject *)const_out, "_a")) < 0) return NULL;
    PyObject *keep[] = {meta_only, built, inplace, scalar_types, spec_shapes, spec_dtypes, planned_spec, prepare_out,
                        prepare_inplace, finish_out, copy_back, complete_after};
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) Py_INCREF(keep[i]);
    ConstOut_type = (PyTypeObject *)built;
    InplaceOut_type = (PyTypeObject *)inplace;
    str_backend = PyUnicode_InternFromString("_backend");
    str_alloc = PyUnicode_InternFromString("alloc");
    str_tensor_class = PyUnicode_InternFromString("tensor_class");
    str_view = PyUnicode_InternFromString("view");
    str_reshape = PyUnicode_InternFromString("reshape");
    str_xp = PyUnicode_InternFromString("xp");
    if (!str_backend || !str_alloc || !str_tensor_class || !str_view || !str_reshape || !str_xp) return NULL;
    general_ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef core_methods[] = {
    {"setup", core_setup, METH_VARARGS, "Bind the Tensor, Storage and Device classes and the rules' helpers."},
    {"setup_general", core_setup_general, METH_VARARGS, "Bind the general lane's classes and the rules' helpers."},
    {"softmax_direct", core_softmax_direct, METH_VARARGS, "softmax's and log_softmax's direct path in C."},
    {"replay_entry", core_replay_entry, METH_VARARGS, "A plan's call in C (devtensor/plan/entry.py)."},
    {"eager_entry", core_eager_entry, METH_VARARGS, "A dt.planned's eager call in C (devtensor/plan/entry.py)."},
    {"view_tensor", (PyCFunction)(void (*)(void))core_view_tensor, METH_FASTCALL,
     "view_tensor(cls, array, base, shape): a view tensor of base over array, as the view lane wraps one."},
    {NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "devtensor._core", "devtensor's compiled fronts (see devtensor/structured/core.py).", -1,
    core_methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    if (PyType_Ready(&Front_type) < 0 || PyType_Ready(&Entry_type) < 0) return NULL;
    PyObject *m = PyModule_Create(&core_module);
    if (m == NULL) return NULL;
    kw_order = Py_BuildValue("(s)", "order");
    kw_out = Py_BuildValue("(s)", "out");
    str_C = PyUnicode_InternFromString("C");
    str_out = PyUnicode_InternFromString("out");
    str_self = PyUnicode_InternFromString("self");
    str_alpha = PyUnicode_InternFromString("alpha");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_flags = PyUnicode_InternFromString("flags");
    str_c_contiguous = PyUnicode_InternFromString("c_contiguous");
    str_kind = PyUnicode_InternFromString("kind");
    zero = PyLong_FromLong(0);
    one = PyLong_FromLong(1);
    if (!kw_order || !kw_out || !str_C || !str_out || !str_self || !str_alpha || !zero || !one) return NULL;
    if (!str_dtype || !str_flags || !str_c_contiguous || !str_kind) return NULL;
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL) return NULL;
    keyword_out_ufuncs[0] = PyObject_GetAttrString(numpy, "maximum");
    keyword_out_ufuncs[1] = PyObject_GetAttrString(numpy, "minimum");
    Py_DECREF(numpy);
    if (!keyword_out_ufuncs[0] || !keyword_out_ufuncs[1]) return NULL;
    Py_INCREF(&Front_type);
    if (PyModule_AddObject(m, "Front", (PyObject *)&Front_type) < 0) return NULL;
    Py_INCREF(&Entry_type);
    if (PyModule_AddObject(m, "Entry", (PyObject *)&Entry_type) < 0) return NULL;
    if (PyModule_AddStringConstant(m, "FINGERPRINT", DEVTENSOR_CORE_FINGERPRINT) < 0) return NULL;
    return m;
}
