/* devtensor._core's view lane (included once by _core.c, after _core_general.h): the common call of a single-result
 * view op (reshape, view, transpose, permute, squeeze, ...; devtensor/views.py), functional or its varargs Tensor
 * method, from the op's table (devtensor.structured.core.view_table): arguments bound (a method's sizes spread out
 * or as one tuple), self a tensor, the meta's spec (reshape's and view's memo first, as their Python front reads it),
 * the kernel of self's key called with the backend's array module, and the view wrapped sharing self's storage, as
 * the Python front wraps it. A spec asking for a copy, a kernel not cached yet, and a kernel's size error go to the
 * views module's own helpers (_rare, _too_large), as in the Python front; modes, NumPy values, aliases and anything
 * else unbound go to the Python front before the meta function runs. */
#ifndef DEVTENSOR_CORE_VIEW_H
#define DEVTENSOR_CORE_VIEW_H

/* The view table's items (a tuple; see view_table). */
enum { V_PARAMS, V_META, V_OP, V_RARE, V_TOO_LARGE, V_SPECS, V_RESHAPE, V_NDARRAY, V_METHOD, V_META_KW, V_NPOS,
       V_SIZE };

static PyObject *str_reshape = NULL, *str_xp = NULL;

/* A view of base over array (steals array): base's device and storage record, not checked writable. */
static PyObject *wrap_view(PyTypeObject *cls, PyObject *array, PyObject *base, PyObject *shape, PyObject *dtype) {
    PyObject *result = cls->tp_alloc(cls, 0);
    if (result == NULL) {
        Py_DECREF(array);
        return NULL;
    }
    set_slot(result, off_array, array);
    set_slot(result, off_device, Py_NewRef(SLOT(base, off_device)));
    set_slot(result, off_storage, Py_NewRef(SLOT(base, off_storage)));
    set_slot(result, off_shape, Py_NewRef(shape));
    set_slot(result, off_dtype, Py_NewRef(dtype));
    set_slot(result, off_checked, Py_NewRef(Py_False));
    return result;
}

/* view_tensor(cls, array, base, shape): a view of base over array (a view kernel's result) as wrap_view makes it,
 * base's dtype; for a plan's replay (devtensor/plan/replay_views.py), which worked out shape at planning. */
static PyObject *core_view_tensor(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyType_Check(args[0]) || !PyType_IsSubtype((PyTypeObject *)args[0], Tensor_type) ||
        !is_tensor(args[2]) || !PyTuple_CheckExact(args[3])) {
        PyErr_SetString(PyExc_TypeError, "view_tensor(cls, array, base, shape): a Tensor class, an array, a tensor, "
                                         "a shape tuple");
        return NULL;
    }
    return wrap_view((PyTypeObject *)args[0], Py_NewRef(args[1]), args[2], args[3], SLOT(args[2], off_dtype));
}

/* A kernel's ValueError or OverflowError: views._too_large(name, spec, error) raises the size error. NULL. */
static PyObject *view_size_error(Front *f, PyObject *table, PyObject *spec) {
    if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
    PyObject *type, *value, *tb;
    fetch_error(&type, &value, &tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    PyObject *r = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(table, V_TOO_LARGE), f->name, spec, value, NULL);
    Py_DECREF(value);
    Py_XDECREF(r); /* (it always raises) */
    return NULL;
}

/* vals[] bound from a varargs method's call (self, *sizes) or (self, sizes): the sizes as one tuple (new reference
 * in *packed); the other parameters at their defaults. 0: not this lane's call. */
static int view_bind_method(PyObject *params, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                            PyObject **vals, PyObject **packed) {
    Py_ssize_t n = PyTuple_GET_SIZE(params);
    if (nargs < 1 || n < 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) return 0;
    if (nargs == 2 && PyTuple_CheckExact(args[1])) {
        *packed = Py_NewRef(args[1]);
    } else {
        for (Py_ssize_t i = 1; i < nargs; i++)
            if (!PyLong_CheckExact(args[i])) return 0;
        if ((*packed = PyTuple_New(nargs - 1)) == NULL) return -1;
        for (Py_ssize_t i = 1; i < nargs; i++) PyTuple_SET_ITEM(*packed, i - 1, Py_NewRef(args[i]));
    }
    vals[0] = args[0];
    vals[1] = *packed;
    for (Py_ssize_t j = 2; j < n; j++) {
        PyObject *p = PyTuple_GET_ITEM(params, j);
        if (PyTuple_GET_ITEM(p, 4) != Py_True) return 0;
        vals[j] = PyTuple_GET_ITEM(p, 5);
    }
    return 1;
}

/* reshape's and view's memo (views.RESHAPE_SPECS) for sizes exactly a tuple of Python ints and a C-contiguous
 * NumPy array, as their Python front reads it. Borrowed; NULL when no entry (an error only with -1 in *failed). */
static PyObject *view_memo(PyObject *table, PyObject *self, PyObject *sizes, int *failed) {
    PyObject *specs = PyTuple_GET_ITEM(table, V_SPECS);
    if (specs == Py_None || !PyTuple_CheckExact(sizes)) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(sizes); i++)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(sizes, i))) return NULL;
    PyObject *key = PyTuple_Pack(2, sizes, SLOT(self, off_shape));
    if (key == NULL) return *failed = -1, NULL;
    PyObject *spec = PyDict_GetItemWithError(specs, key);
    Py_DECREF(key);
    if (spec == NULL) {
        if (PyErr_Occurred()) *failed = -1;
        return NULL;
    }
    PyObject *array = SLOT(self, off_array);
    if ((PyObject *)Py_TYPE(array) != PyTuple_GET_ITEM(table, V_NDARRAY)) return NULL;
    int c = c_contiguous(array);
    if (c < 0) *failed = -1;
    return c > 0 ? spec : NULL;
}

/* The view lane: the call's result, FALLBACK (nothing ran) or NULL with an error. */
static PyObject *view_call(Front *f, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *table = f->entries;
    PyObject *params = PyTuple_GET_ITEM(table, V_PARAMS);
    PyObject *vals[MAX_PARAMS] = {NULL}, *packed = NULL;
    int bound = PyTuple_GET_ITEM(table, V_METHOD) == Py_True
                    ? view_bind_method(params, args, nargs, kwnames, vals, &packed)
                    : bind_params(params, PyLong_AsSsize_t(PyTuple_GET_ITEM(table, V_NPOS)), args, nargs, kwnames,
                                  vals, NULL);
    if (bound <= 0 || !is_tensor(vals[0])) {
        Py_XDECREF(packed);
        if (bound < 0) return NULL;
        if (PyErr_Occurred()) PyErr_Clear();
        return FALLBACK;
    }
    /* ---- from here on the call is the lane's ---- */
    Py_INCREF(table);
    PyObject *self = vals[0], *result = NULL, *kernel = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(params);
    int failed = 0;
    PyObject *spec = n > 1 ? view_memo(table, self, vals[1], &failed) : NULL;
    if (failed) goto done;
    if (spec != NULL) Py_INCREF(spec);
    else {
        PyObject *meta_kw = PyTuple_GET_ITEM(table, V_META_KW);
        spec = PyObject_Vectorcall(PyTuple_GET_ITEM(table, V_META), vals, n - PyTuple_GET_SIZE(meta_kw),
                                   PyTuple_GET_SIZE(meta_kw) ? meta_kw : NULL);
        if (spec == NULL) goto done;
    }
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 3) {
        PyErr_Format(PyExc_TypeError, "%U: the meta function returned no ViewSpec", f->name);
        goto done;
    }
    PyObject *key = SLOT(SLOT(self, off_device), off_key);
    kernel = key ? PyDict_GetItemWithError(f->handlers, key) : NULL;
    if (kernel == NULL && PyErr_Occurred()) goto done;
    Py_XINCREF(kernel);
    int copy = PyObject_IsTrue(PyTuple_GET_ITEM(spec, 2));
    if (copy < 0) goto done;
    if (kernel == NULL || copy) {
        result = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(table, V_RARE), PyTuple_GET_ITEM(table, V_OP), self,
                                              kernel ? kernel : Py_None, spec, NULL);
        goto done;
    }
    PyObject *plan = PyTuple_GET_ITEM(spec, 1), *reshape = PyTuple_GET_ITEM(table, V_RESHAPE);
    if (reshape != Py_None && PyList_GET_SIZE(reshape) && kernel == PyList_GET_ITEM(reshape, 0) &&
        PyTuple_CheckExact(plan)) {
        PyObject *array = PyObject_CallMethodOneArg(SLOT(self, off_array), str_reshape, plan);
        if (array == NULL) view_size_error(f, table, spec);
        else result = wrap_view(Py_TYPE(self), array, self, plan, SLOT(self, off_dtype));
        goto done;
    }
    PyObject *xp, *cls;
    if (backend_of(f, self, str_xp, &xp, &cls) < 0) goto done;
    Py_INCREF(xp);
    Py_INCREF(cls);
    PyObject *kargs[3] = {xp, SLOT(self, off_array), plan};
    PyObject *array = PyObject_Vectorcall(kernel, kargs, 3, NULL);
    if (array == NULL) view_size_error(f, table, spec);
    else {
        PyObject *shape = PyObject_GetAttrString(array, "shape");
        PyObject *dtype = shape ? PyObject_GetAttr(array, str_dtype) : NULL;
        if (dtype != NULL) result = wrap_view((PyTypeObject *)cls, Py_NewRef(array), self, shape, dtype);
        Py_XDECREF(shape);
        Py_XDECREF(dtype);
        Py_DECREF(array);
    }
    Py_DECREF(xp);
    Py_DECREF(cls);
done:
    Py_DECREF(table);
    Py_XDECREF(spec);
    Py_XDECREF(kernel);
    Py_XDECREF(packed);
    return result;
}

#endif
