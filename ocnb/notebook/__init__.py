"""The ``%oc`` magics' parts (:mod:`ocnb.magics` holds ``OcMagics``): reading a line (:mod:`.lines`) and
the ``%oc mcp`` sub-command (:mod:`.mcp_command`)."""

from .._extras import extra

with extra("notebook"):
    import IPython  # noqa: F401 - the notebook extra: every module here needs it
