/* devtensor._core's general lane (included once by _core.c, after _core_memo.h): the common call of ANY structured
 * op variant, built-in or custom, from the op's tables (devtensor.structured.core.general_table): arguments bound
 * by the schema, tensors of one device with no guard, the meta function called, a custom op's result checked, the
 * handler of the device's key called with a fresh ConstOut, the result wrapped. Every test that could send the
 * call elsewhere (an argument of another type, NumPy values, aliases, a device mismatch, a guard, no handler yet,
 * an out= or inplace self not checked writable before or sharing memory with an input, a bool or Literal argument
 * out of its values) is made BEFORE the meta function runs, so a call forwarded to the Python front runs the meta
 * function once, as there; after it, the lane applies the rules' own helpers (prepare_out, prepare_inplace,
 * finish_out, check_writable, complete_after_condition) exactly where the Python front calls them. */
#ifndef DEVTENSOR_CORE_GENERAL_H
#define DEVTENSOR_CORE_GENERAL_H

/* Parameter categories of a general table (devtensor.structured.core.general_table). */
enum { P_OTHER = 0, P_TENSOR = 1, P_TENSOR_OR_SCALAR = 2, P_SCALAR = 3 };
#define MAX_PARAMS 16

/* ---- set once by setup_general() ---- */
static PyObject *meta_only = NULL;       /* dispatcher.META_ONLY: the meta device's handler (no kernel runs) */
static PyTypeObject *ConstOut_type = NULL, *InplaceOut_type = NULL; /* const_out._Built, const_out.InplaceOut */
static Py_ssize_t off_const_array;       /* ConstOut's slot _a */
static PyObject *scalar_types = NULL;    /* dtypes.SCALAR_TYPES */
static PyObject *spec_shapes = NULL, *spec_dtypes = NULL; /* rules.SPEC_SHAPES, rules.SPEC_DTYPES */
static PyObject *planned_spec = NULL;    /* tensor.PlannedSpec */
static PyObject *prepare_out = NULL, *prepare_inplace = NULL, *finish_out = NULL, *copy_back = NULL;
static PyObject *complete_after = NULL;  /* rules.complete_after_condition */
static PyObject *str_backend = NULL, *str_alloc = NULL, *str_tensor_class = NULL, *str_view = NULL;
static int general_ready = 0;

/* How a failed write into an out or inplace self completes (general_write_error). */
enum { CONDITION_COMPLETE = 0, CONDITION_BUMP = 1, CONDITION_WRITTEN = 2 };

/* The general table's items (a tuple; see general_table). */
enum { G_PARAMS, G_META, G_CHECKED, G_PLAN, G_OMI, G_VALUES, G_META_KW, G_KERNEL_KW, G_NPOS, G_DIRECT, G_SIZE };

/* The backend attribute attr (its alloc for the general lane, its xp for the view lane) and tensor_class of the
 * backend of first's class, cached in f per tensor class (a Front is one lane's, so one attr per Front). Borrowed. */
static int backend_of(Front *f, PyObject *first, PyObject *attr, PyObject **item, PyObject **cls) {
    PyObject *type = (PyObject *)Py_TYPE(first);
    if (type != f->g_type || f->g_alloc == NULL) {
        PyObject *backend = PyObject_GetAttr(type, str_backend);
        if (backend == NULL) return -1;
        PyObject *a = PyObject_GetAttr(backend, attr);
        PyObject *c = a ? PyObject_GetAttr(backend, str_tensor_class) : NULL;
        Py_DECREF(backend);
        if (c == NULL || !PyType_Check(c)) {
            if (c != NULL) PyErr_SetString(PyExc_TypeError, "devtensor._core: a backend's tensor_class is not a class");
            Py_XDECREF(a);
            Py_XDECREF(c);
            return -1;
        }
        Py_INCREF(type);
        Py_XSETREF(f->g_type, type);
        Py_XSETREF(f->g_alloc, a);
        Py_XSETREF(f->g_class, c);
    }
    *item = f->g_alloc;
    *cls = f->g_class;
    return 0;
}

/* A ConstOut (an InplaceOut when inplace) over a fresh view of array. New reference. */
static PyObject *const_out_over(PyObject *array, int inplace) {
    PyTypeObject *type = inplace ? InplaceOut_type : ConstOut_type;
    PyObject *view = PyObject_CallMethodNoArgs(array, str_view);
    if (view == NULL) return NULL;
    PyObject *c = type->tp_alloc(type, 0);
    if (c == NULL) {
        Py_DECREF(view);
        return NULL;
    }
    set_slot(c, off_const_array, view);
    return c;
}

/* The kernel's call handler(*vals, [plan=spec[2]], out=const_out): vals in the schema's order (positional
 * parameters first, then the keyword-only ones, named by kernel_kw, which ends with "plan" for an op with a plan
 * and "out"). New reference. */
static PyObject *kernel_call(PyObject *table, PyObject *handler, PyObject **vals, Py_ssize_t n, PyObject *spec,
                             PyObject *const_out) {
    PyObject *argv[MAX_PARAMS + 2];
    for (Py_ssize_t i = 0; i < n; i++) argv[i] = vals[i];
    Py_ssize_t m = n;
    if (PyTuple_GET_ITEM(table, G_PLAN) == Py_True) argv[m++] = PyTuple_GET_ITEM(spec, 2);
    argv[m++] = const_out;
    PyObject *kw = PyTuple_GET_ITEM(table, G_KERNEL_KW);
    return PyObject_Vectorcall(handler, argv, m - PyTuple_GET_SIZE(kw), kw);
}

/* The kernel writing target's memory (out=, or an inplace self named arg) raised: as the Python front's protected
 * call, a ValueError is checked into the read-only error (rules.check_writable); a floating-point condition made
 * an error completes the write (mode CONDITION_COMPLETE: rules.complete_after_condition; CONDITION_BUMP, an inplace
 * self of an op that may write over its input: version += 1; CONDITION_WRITTEN, the direct path's one NumPy call:
 * rules.written_then_raised). The original error is raised again unless the helper raised its own (which carries it as
 * __context__). Returns NULL. */
static PyObject *general_write_error(Front *f, PyObject *table, const char *arg, PyObject *target, PyObject *array,
                                     PyObject *inputs, PyObject *handler, PyObject *const_out, PyObject **vals,
                                     Py_ssize_t n, PyObject *spec, int mode) {
    int is_value = PyErr_ExceptionMatches(PyExc_ValueError);
    int is_condition = PyErr_ExceptionMatches(PyExc_Warning) || PyErr_ExceptionMatches(PyExc_FloatingPointError);
    if (!is_value && !is_condition) return NULL;
    PyObject *type, *value, *tb, *r;
    fetch_error(&type, &value, &tb);
    if (is_value) {
        PyObject *name = PyUnicode_FromString(arg);
        r = name ? PyObject_CallFunctionObjArgs(check_writable, f->name, name, target, NULL) : NULL;
        Py_XDECREF(name);
    } else if (mode == CONDITION_BUMP) {
        r = bump(target) < 0 ? NULL : Py_NewRef(Py_None);
    } else if (mode == CONDITION_WRITTEN) {
        r = PyObject_CallFunctionObjArgs(written_then_raised, target, array, NULL);
    } else {
        PyObject *argv[MAX_PARAMS + 7];
        argv[0] = target, argv[1] = array, argv[2] = inputs, argv[3] = handler, argv[4] = const_out;
        for (Py_ssize_t i = 0; i < n; i++) argv[5 + i] = vals[i];
        Py_ssize_t m = 5 + n;
        if (PyTuple_GET_ITEM(table, G_PLAN) == Py_True) argv[m++] = PyTuple_GET_ITEM(spec, 2);
        /* (the kernel's keywords without the trailing "out": the helper passes out=const_out itself) */
        PyObject *kw = PyTuple_GET_ITEM(table, G_KERNEL_KW);
        PyObject *names = PyTuple_GetSlice(kw, 0, PyTuple_GET_SIZE(kw) - 1);
        r = names ? PyObject_Vectorcall(complete_after, argv, m - PyTuple_GET_SIZE(names), names) : NULL;
        Py_XDECREF(names);
    }
    return raise_after(r, type, value, tb);
}

/* The direct path's forms (devtensor.structured.core._direct_offer): the Python front's NumPy call while the op's
 * built-in kernel is the handler (devtensor/structured/front_lines.py _direct_impl_call), made here into array. */
enum { D_UNARY = 1, D_BINARY = 2, D_ALPHA = 3, D_ARRAYS = 4, D_SCALARS = 5, D_PLAN = 6 };

static inline PyObject *array_or_value(PyObject *v) { return is_tensor(v) ? SLOT(v, off_array) : v; }

/* direct[1](...) writing array, by the form of dinfo = (direct, form, ONE, unary inline entry or None): unary fn(x, array); binary fn(a, b,
 * out=array) (alpha not ONE: direct[2](a, b, alpha, array)); arrays fn(*arrays, out=array); scalars fn(arrays and
 * numbers in order, array); plan fn(*tensor arrays, spec[2], array). New reference. */
static PyObject *direct_call(PyObject *dinfo, PyObject *params, PyObject **vals, Py_ssize_t n, PyObject *spec,
                             PyObject *array) {
    PyObject *direct = PyTuple_GET_ITEM(dinfo, 0), *fn = PyList_GET_ITEM(direct, 1);
    long form = PyLong_AsLong(PyTuple_GET_ITEM(dinfo, 1));
    PyObject *argv[MAX_PARAMS + 2];
    Py_ssize_t m = 0;
    switch (form) {
    case D_UNARY:
        argv[0] = array_or_value(vals[0]), argv[1] = array;
        return PyObject_Vectorcall(fn, argv, 2, NULL);
    case D_ALPHA:
        if (vals[2] != PyTuple_GET_ITEM(dinfo, 2)) {
            argv[0] = array_or_value(vals[0]), argv[1] = array_or_value(vals[1]), argv[2] = vals[2], argv[3] = array;
            return PyObject_Vectorcall(PyList_GET_ITEM(direct, 2), argv, 4, NULL);
        }
        /* fall through: alpha 1 is the one ufunc call */
    case D_BINARY:
        argv[0] = array_or_value(vals[0]), argv[1] = array_or_value(vals[1]), argv[2] = array;
        return PyObject_Vectorcall(fn, argv, 2, kw_out);
    case D_ARRAYS:
        for (Py_ssize_t i = 0; i < n; i++) argv[m++] = SLOT(vals[i], off_array);
        argv[m] = array;
        return PyObject_Vectorcall(fn, argv, m, kw_out);
    case D_SCALARS:
        for (Py_ssize_t i = 0; i < n; i++) argv[m++] = array_or_value(vals[i]);
        argv[m++] = array;
        return PyObject_Vectorcall(fn, argv, m, NULL);
    case D_PLAN:
        for (Py_ssize_t i = 0; i < n; i++)
            if (PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(params, i), 1)) == P_TENSOR)
                argv[m++] = SLOT(vals[i], off_array);
        argv[m++] = PyTuple_GET_ITEM(spec, 2);
        argv[m++] = array;
        return PyObject_Vectorcall(fn, argv, m, NULL);
    }
    PyErr_SetString(PyExc_SystemError, "devtensor._core: unknown direct form");
    return NULL;
}

/* The meta function's result, checked as the Python front checks a custom op's (built-in ones are trusted): a
 * shape seen valid before (rules.SPEC_SHAPES holds that very tuple) and a supported dtype pass; anything else goes
 * through the op's checker (rules.checked_spec / checked_planned_spec), which raises or returns the canonical
 * spec. New reference, or NULL with an error. */
static PyObject *general_spec(Front *f, PyObject *table, PyObject **vals, Py_ssize_t n) {
    PyObject *dinfo = PyTuple_GET_ITEM(table, G_DIRECT);
    PyObject *cache = dinfo != Py_None ? PyTuple_GET_ITEM(dinfo, 3) : Py_None;
    if (cache != Py_None && is_tensor(vals[0])) {
        /* (a unary op's inline entry, self's dtype -> the result's, read as the Python front reads it) */
        PyObject *dtype = PyDict_GetItemWithError(cache, SLOT(vals[0], off_dtype));
        if (dtype != NULL) return PyTuple_Pack(2, SLOT(vals[0], off_shape), dtype);
        if (PyErr_Occurred()) return NULL;
    }
    PyObject *meta_kw = PyTuple_GET_ITEM(table, G_META_KW);
    PyObject *spec = PyObject_Vectorcall(PyTuple_GET_ITEM(table, G_META), vals, n - PyTuple_GET_SIZE(meta_kw),
                                         PyTuple_GET_SIZE(meta_kw) ? meta_kw : NULL);
    if (spec == NULL) return NULL;
    int plan = PyTuple_GET_ITEM(table, G_PLAN) == Py_True;
    PyObject *checked = PyTuple_GET_ITEM(table, G_CHECKED);
    if (checked != Py_None) {
        int fine = plan ? (PyObject *)Py_TYPE(spec) == planned_spec : (PyTuple_CheckExact(spec) && PyTuple_GET_SIZE(spec) == 2);
        if (fine) {
            PyObject *shape = PyTuple_GET_ITEM(spec, 0);
            PyObject *known = PyTuple_CheckExact(shape) ? PyDict_GetItemWithError(spec_shapes, shape) : NULL;
            /* (an equal shape seen valid counts where every dim is exactly a Python int: rules.exact_shape) */
            fine = known != NULL;
            for (Py_ssize_t i = 0; fine && known != shape && i < PyTuple_GET_SIZE(shape); i++)
                fine = PyLong_CheckExact(PyTuple_GET_ITEM(shape, i));
            if (fine) fine = PySet_Contains(spec_dtypes, PyTuple_GET_ITEM(spec, 1));
            if (fine < 0) PyErr_Clear(), fine = 0; /* (an unhashable dtype: the checker names it) */
        }
        if (!fine) {
            if (PyErr_Occurred()) PyErr_Clear();
            Py_SETREF(spec, PyObject_CallFunctionObjArgs(checked, f->name, spec, NULL));
            if (spec == NULL) return NULL;
        }
    }
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 2 + plan || !PyTuple_Check(PyTuple_GET_ITEM(spec, 0))) {
        PyErr_Format(PyExc_TypeError, "%U: the meta function returned no (shape, dtype) spec", f->name);
        Py_DECREF(spec);
        return NULL;
    }
    return spec;
}

/* The tuple of vals at the tensor-like parameters (tensor, tensor-or-scalar), from index `from` on: the `inputs`
 * the rules' helpers check overlaps against. New reference. */
static PyObject *general_inputs(PyObject *params, PyObject **vals, Py_ssize_t n, Py_ssize_t from) {
    PyObject *items[MAX_PARAMS];
    Py_ssize_t m = 0;
    for (Py_ssize_t i = from; i < n; i++) {
        long cat = PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(params, i), 1));
        if (cat == P_TENSOR || cat == P_TENSOR_OR_SCALAR) items[m++] = vals[i];
    }
    PyObject *t = PyTuple_New(m);
    if (t == NULL) return NULL;
    for (Py_ssize_t i = 0; i < m; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(items[i]));
    return t;
}

/* A bool or Literal argument the Python front's generic value check passes without a call (rules.value_checks:
 * (index, optional, type, allowed); type None: a bool). -1 on an error. */
static int values_fit(PyObject *checks, PyObject **vals) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(checks); i++) {
        PyObject *c = PyTuple_GET_ITEM(checks, i);
        PyObject *v = vals[PyLong_AsSsize_t(PyTuple_GET_ITEM(c, 0))];
        if (v == Py_None && PyTuple_GET_ITEM(c, 1) == Py_True) continue;
        PyObject *type = PyTuple_GET_ITEM(c, 2);
        if (type == Py_None) {
            if (v != Py_True && v != Py_False) return 0;
        } else {
            if ((PyObject *)Py_TYPE(v) != type) return 0;
            int in = PySequence_Contains(PyTuple_GET_ITEM(c, 3), v);
            if (in <= 0) return in;
        }
    }
    return 1;
}

/* vals[] bound from a call by the schema's params (positional, then the op's own keyword names; defaults for the
 * rest); with `out` non-NULL, an out= keyword too (None: *out stays NULL). 0: not a lanes' call (too many
 * positional arguments, an alias, an unknown or repeated keyword, a missing argument: the Python front's). */
static int bind_params(PyObject *params, Py_ssize_t npos, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       PyObject **vals, PyObject **out) {
    Py_ssize_t n = PyTuple_GET_SIZE(params);
    if (nargs > npos) return 0;
    for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = args[i];
    for (Py_ssize_t k = 0; kwnames != NULL && k < PyTuple_GET_SIZE(kwnames); k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *v = args[nargs + k];
        Py_ssize_t j = 0;
        for (; j < n; j++) {
            PyObject *name = PyTuple_GET_ITEM(PyTuple_GET_ITEM(params, j), 0);
            if (name == key || PyUnicode_Compare(name, key) == 0) break;
        }
        if (j < n) {
            if (vals[j] != NULL) return 0;
            vals[j] = v;
        } else if (out != NULL && (key == str_out || PyUnicode_Compare(key, str_out) == 0)) {
            *out = v == Py_None ? NULL : v;
        } else {
            if (PyErr_Occurred()) PyErr_Clear();
            return 0;
        }
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *p = PyTuple_GET_ITEM(params, j);
        if (vals[j] != NULL) continue;
        if (PyTuple_GET_ITEM(p, 4) != Py_True) return 0;
        vals[j] = PyTuple_GET_ITEM(p, 5);
    }
    return 1;
}

/* The general lane: the call's result, FALLBACK (nothing ran) or NULL with an error. */
static PyObject *general_call(Front *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *table = f->general;
    PyObject *params = PyTuple_GET_ITEM(table, G_PARAMS);
    Py_ssize_t n = PyTuple_GET_SIZE(params);
    PyObject *vals[MAX_PARAMS] = {NULL};
    PyObject *out = NULL;
    if (!bind_params(params, PyLong_AsSsize_t(PyTuple_GET_ITEM(table, G_NPOS)), args, nargs, kwnames, vals,
                     f->variant == FUNCTIONAL ? &out : NULL))
        return FALLBACK;
    PyObject *device = NULL, *first = NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *p = PyTuple_GET_ITEM(params, j);
        PyObject *v = vals[j];
        long cat = PyLong_AsLong(PyTuple_GET_ITEM(p, 1));
        if (cat == P_OTHER) continue;
        if (v == Py_None && PyTuple_GET_ITEM(p, 3) == Py_True) continue;
        if ((cat == P_TENSOR || cat == P_TENSOR_OR_SCALAR) && is_tensor_of(f, v)) {
            PyObject *d = SLOT(v, off_device);
            if (device == NULL) device = d, first = v;
            else if (d != device) return FALLBACK;
        } else if (cat == P_TENSOR || (j == 0 && f->variant == INPLACE)) {
            return FALLBACK;
        } else if (!(cat == P_SCALAR && PyTuple_GET_ITEM(p, 4) == Py_True && v == PyTuple_GET_ITEM(p, 5))) {
            int in = PySet_Contains(scalar_types, (PyObject *)Py_TYPE(v));
            if (in <= 0) {
                if (in < 0) PyErr_Clear();
                return FALLBACK;
            }
        }
    }
    if (device == NULL || SLOT(device, off_guard) != Py_None) return FALLBACK;
    PyObject *target = f->variant == INPLACE ? vals[0] : out;
    if (target != NULL) {
        if (!is_tensor_of(f, target) || SLOT(target, off_device) != device || SLOT(target, off_checked) != Py_True)
            return FALLBACK;
        PyObject *root = SLOT(SLOT(target, off_storage), off_root);
        for (Py_ssize_t j = f->variant == INPLACE; j < n; j++)
            if (is_tensor(vals[j]) && SLOT(SLOT(vals[j], off_storage), off_root) == root) return FALLBACK;
    }
    PyObject *key = f->bound_key != NULL ? f->bound_key : SLOT(device, off_key);
    PyObject *handler = key ? PyDict_GetItemWithError(f->handlers, key) : NULL;
    if (handler == NULL) {
        if (PyErr_Occurred()) PyErr_Clear();
        return FALLBACK; /* (resolved, or refused, by the Python front) */
    }
    /* (the op's direct path while its built-in kernel is the handler: the Python front's own NumPy call, cheaper
     * than the kernel's frame and ConstOut, made here as there) */
    PyObject *dinfo = PyTuple_GET_ITEM(table, G_DIRECT);
    int direct = dinfo != Py_None && handler == PyList_GET_ITEM(PyTuple_GET_ITEM(dinfo, 0), 0);
    int fit = values_fit(PyTuple_GET_ITEM(table, G_VALUES), vals);
    if (fit <= 0) {
        if (fit < 0) PyErr_Clear();
        return FALLBACK;
    }
    /* ---- from here on the call is the lane's (the table and handler held: Python code runs below) ---- */
    Py_INCREF(handler);
    Py_INCREF(table);
    PyObject *spec = general_spec(f, table, vals, n), *result = NULL, *array = NULL, *const_out = NULL;
    PyObject *inputs = NULL, *alloc = NULL, *cls = NULL;
    if (spec == NULL) goto done;
    PyObject *shape = PyTuple_GET_ITEM(spec, 0), *dtype = PyTuple_GET_ITEM(spec, 1);
    int omi = PyTuple_GET_ITEM(table, G_OMI) == Py_True;
    if (target == NULL) {
        if (backend_of(f, first, str_alloc, &alloc, &cls) < 0) goto done;
        Py_INCREF(alloc);
        Py_INCREF(cls);
        PyObject *av[2] = {shape, dtype};
        array = PyObject_Vectorcall(alloc, av, 2, NULL);
        if (array == NULL) {
            allocation_error(f, spec, device);
            goto done;
        }
        if (direct) {
            PyObject *r = direct_call(dinfo, params, vals, n, spec, array);
            if (r == NULL) goto done;
            Py_DECREF(r);
        } else if (handler != meta_only) {
            if ((const_out = const_out_over(array, 0)) == NULL) goto done;
            PyObject *r = kernel_call(table, handler, vals, n, spec, const_out);
            if (r == NULL) goto done;
            Py_DECREF(r);
        }
        PyObject *adtype = PyObject_GetAttr(array, str_dtype);
        if (adtype == NULL) goto done;
        result = wrap((PyTypeObject *)cls, Py_NewRef(array), device, shape, adtype);
        Py_DECREF(adtype);
        goto done;
    }
    PyObject *own = SLOT(target, off_array);
    int fits = same_shape(SLOT(target, off_shape), shape);
    if (fits < 0) goto done;
    fits = fits && dtype == SLOT(target, off_dtype);
    int inplace = f->variant == INPLACE;
    if ((inputs = general_inputs(params, vals, n, inplace)) == NULL) goto done;
    if (fits) array = Py_NewRef(own);
    else {
        PyObject *omi_obj = omi ? Py_True : Py_False;
        array = PyObject_CallFunctionObjArgs(inplace ? prepare_inplace : prepare_out, f->name, target, spec, inputs,
                                             omi_obj, NULL);
        if (array == NULL) goto done;
        if (inplace && omi) Py_SETREF(array, Py_NewRef(own));
    }
    if (direct) {
        PyObject *r = direct_call(dinfo, params, vals, n, spec, array);
        if (r == NULL) {
            general_write_error(f, table, inplace ? "self" : "out", target, array, NULL, NULL, NULL, vals, n, spec,
                                CONDITION_WRITTEN);
            goto done;
        }
        Py_DECREF(r);
    } else if (handler != meta_only) {
        if ((const_out = const_out_over(array, inplace && array == own)) == NULL) goto done;
        PyObject *r = kernel_call(table, handler, vals, n, spec, const_out);
        if (r == NULL) {
            /* (complete_after_condition checks every tensor argument: the inplace self too) */
            if (inplace) Py_SETREF(inputs, general_inputs(params, vals, n, 0));
            if (inputs != NULL)
                general_write_error(f, table, inplace ? "self" : "out", target, array, inputs, handler, const_out,
                                    vals, n, spec, inplace && omi ? CONDITION_BUMP : CONDITION_COMPLETE);
            goto done;
        }
        Py_DECREF(r);
    }
    if (array != SLOT(target, off_array)) {
        PyObject *r = inplace ? PyObject_CallFunctionObjArgs(copy_back, target, array, NULL)
                              : PyObject_CallFunctionObjArgs(finish_out, f->name, target, array, NULL);
        if (r == NULL) goto done;
        Py_DECREF(r);
    }
    if (bump(target) == 0) result = Py_NewRef(target);
done:
    Py_DECREF(handler);
    Py_DECREF(table);
    Py_XDECREF(alloc);
    Py_XDECREF(cls);
    Py_XDECREF(spec);
    Py_XDECREF(array);
    Py_XDECREF(const_out);
    Py_XDECREF(inputs);
    return result;
}

#endif
