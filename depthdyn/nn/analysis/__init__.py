"""The analysis room: what a model does over depth.

* :mod:`.record`: find a model's residual layers and record its residual stream with hooks
  during the model's own forward (masks, caches and dtypes as the model uses them);
* :mod:`.operators`: each layer's Jacobian as a matrix-free operator (``vjp``/``jvp`` on
  the recorded graph) with Lanczos, Arnoldi and Hutchinson; dense only where small;
* :mod:`.inspect`: :func:`~depthdyn.nn.analysis.inspect.inspect`, the one entry point for
  any model: depth profile, per-step operators, per-step recurrences; :mod:`.inspection` its
  result, :mod:`.checks` what it checks first (setup, non-finite values, coupled batch rows),
  :mod:`.steps` attention and MLP as separate steps, :mod:`.placement` the measured ``lam`` on
  any family's stability region;
* :mod:`.product`: the end-to-end Jacobian of a run of layers (singular values, Lyapunov
  exponents) from the per-layer operators;
* :mod:`.hyper`: hyper-connection gains and stream homogenisation per token;
* :mod:`.diagnostics`, :mod:`.linearize`: the diagnostics and the bridge to the theory for
  depthdyn's own :class:`~depthdyn.nn.DepthStack`.
"""
