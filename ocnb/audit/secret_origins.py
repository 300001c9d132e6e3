"""Where a secret bound to origins may go: the checks, made before anything is typed or sent.

A secret bound to origins (:meth:`ocnb.audit.secrets.SecretStore.bind`, ``NAME.origins=`` in a
secrets file) is substituted into a call like any other, but the call may use it only where its
value can reach nothing but those origins:

- typed or set into an element (``form_input``, ``fill_form``, ``interact``, and the steps of
  ``execute_plan``, which run through dispatch): the origin of **the frame that holds the element**
  (:func:`check_target`, called by the tool once its target is resolved); a skill replay's steps
  likewise (:func:`check_step`; while any secret is bound, replay resolves each step before acting
  instead of in one fused call, so the element's frame is known first);
- the click or key press (Enter; Space on a submit button) that **submits a form** whose fields
  hold a bound secret's value: the form's submission origin — the submitter's ``formaction`` or the
  form's ``action``, resolved against the document (:func:`check_target` again). The fields are read
  at the moment of the submit, so a value filled by an earlier call, a plan step or a replay is
  covered alike;
- ``navigate`` and ``tabs_create``: the destination's origin (:func:`check_call`, before the
  browser is touched);
- ``javascript_tool``, ``cookies`` and ``storage``: the current page's origin (a cookie's ``url``
  when given); ``network_conditions``' ``http_auth``: the origin the credentials are scoped to
  (:func:`check_page`, :func:`check_origin`). Extra headers go to every origin: refused.

Any other tool is refused whenever a bound secret's value is among its arguments (:func:`check_call`).
A refusal is :class:`~ocnb.errors.SecretNotAllowed`, naming the secret (never its value), the origin
found and the allowed patterns; the call's journal line records it like any failed call.

Secrets are recognised by value in the substituted arguments, so a call that received a value
already filled in (a plan's step) is checked the same as one with ``${SECRET:NAME}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ocnb.errors import SecretNotAllowed
from ocnb.origins import origin_of

if TYPE_CHECKING:
    from ocnb.audit.secrets import SecretStore
    from ocnb.calls import CallContext
    from ocnb.perception.targets import Resolved

__all__ = [
    "DESTINATION_TOOLS",
    "HANDLER_CHECKED",
    "check_call",
    "check_origin",
    "check_page",
    "check_step",
    "check_target",
]

#: Tools whose destination URL (``url``) is checked before the browser is touched.
DESTINATION_TOOLS = frozenset({"navigate", "tabs_create"})
#: Tools that check a bound secret themselves, once they know the frame, page or origin it goes to.
#: ``execute_plan`` runs each step through dispatch, where the step is checked as its own call;
#: ``oc_skill_replay`` runs each step as a ``replay_step`` call, which checks the step, its params and
#: secrets filled in, once its element is resolved and before it acts (:func:`check_step`).
HANDLER_CHECKED = frozenset(
    {
        "form_input",
        "fill_form",
        "interact",
        "javascript_tool",
        "cookies",
        "storage",
        "network_conditions",
        "execute_plan",
        "oc_skill_replay",
        "replay_step",
    }
)

#: The form a click or an Enter would submit, with its submission URL and its fields' values.
_SUBMISSION_JS = """(el, enter) => {
  const isSubmit = e => (e.tagName === 'BUTTON' && e.type === 'submit')
    || (e.tagName === 'INPUT' && (e.type === 'submit' || e.type === 'image'));
  let form = null, submitter = null;
  if (el.tagName === 'LABEL' && el.control) el = el.control;  // a click on a label activates its control
  const button = el.closest('button, input');
  if (button && isSubmit(button)) { submitter = button; form = button.form; }
  else if (enter && (el.tagName === 'INPUT' || el.tagName === 'SELECT') && el.form) {
    form = el.form;  // implicit submission: the form's default button decides where it goes
    submitter = Array.from(form.elements).find(isSubmit) || null;
  }
  if (!form) return null;
  const attr = submitter && submitter.hasAttribute('formaction')
    ? submitter.getAttribute('formaction') : (form.getAttribute('action') || '');
  let action = '';
  try { action = new URL(attr, document.baseURI).href; } catch (e) { action = ''; }
  const values = Array.from(form.elements, e => (typeof e.value === 'string' ? e.value : ''));
  return {action, values};
}"""


def _refuse(store: SecretStore, name: str, origin: str | None, where: str) -> SecretNotAllowed:
    allowed = store.origins(name) or []
    found = origin or "an opaque origin"
    return SecretNotAllowed(
        f"secret {name} is bound to {'; '.join(allowed)}, but {where} is {found}: nothing was typed or sent",
        details={"name": name, "origin": origin, "allowed": allowed, "where": where},
    )


def check_origin(store: SecretStore, value: Any, origin: str | None, where: str) -> list[str]:
    """Refuse (``SECRET_NOT_ALLOWED``) when a bound secret in ``value`` may not reach ``origin``.

    Returns the bound secrets found in ``value`` (all allowed there).
    """
    names = store.bound_in(value)
    for name in names:
        patterns = store.patterns(name) or ()
        if not any(p.matches(origin) for p in patterns):
            raise _refuse(store, name, origin, where)
    return names


def check_call(store: SecretStore, call: CallContext) -> None:
    """Before-hook part (after substitution): destinations, extra headers, and every tool that cannot
    say where a bound secret would go."""
    args = call.exec_args
    if not store.bound or not store.bound_in(args):
        return
    if call.name in DESTINATION_TOOLS:
        url = args.get("url")
        check_origin(store, args, origin_of(url) if isinstance(url, str) else None, "the destination")
    elif call.name == "network_conditions":
        # Extra headers go with every request to every origin: they cannot be scoped to a secret's origins.
        check_origin(store, args.get("headers"), None, "extra headers (sent to every origin; not scoped)")
    elif call.name not in HANDLER_CHECKED:
        name = store.bound_in(args)[0]
        raise _refuse(store, name, None, f"{call.name} (a tool that cannot keep it to its origins)")


async def check_page(store: SecretStore, page: Any, value: Any, url: str | None = None) -> None:
    """Refuse a bound secret in ``value`` unless the page's origin (or ``url``'s, when given) is allowed."""
    if store.bound_in(value):
        target = url if url else str(page.url)
        check_origin(store, value, origin_of(target), "the page's origin" if not url else "the URL's origin")


async def check_target(
    store: SecretStore,
    page: Any,
    target: Resolved | None,
    value: Any,
    *,
    action: str = "fill",
    key: str | None = None,
) -> None:
    """Refuse before acting on ``target`` (``None``: the page, for a key pressed with nothing focused):

    - a bound secret in ``value`` unless the origin of the frame holding the element is allowed;
    - a click, Enter or typed newline that submits a form whose fields hold a bound secret's value,
      unless the form's submission origin is allowed for it.
    """
    if not store.bound:
        return
    frame = target.frame if target is not None else page.main_frame
    await _check_element(store, frame, target.element if target is not None else None, value, action, key)


async def check_step(store: SecretStore, page: Any, element: Any, step: dict[str, Any]) -> None:
    """:func:`check_target` for a skill replay step (its element resolved, its secrets filled in):
    a ``navigate`` step by its destination, any other by the element's frame and form."""
    if not store.bound:
        return
    args = step.get("args") or {}
    if step.get("kind") == "navigate":
        url = args.get("url")
        check_origin(store, args, origin_of(url) if isinstance(url, str) else None, "the destination")
        return
    kind = str(step.get("kind") or "")
    action = {"fill": str(args.get("action") or "fill"), "press": "press"}.get(kind, str(args.get("action") or "click"))
    frame = await element.owner_frame() if element is not None else page.main_frame  # failures: replay translates
    await _check_element(store, frame or page.main_frame, element, args, action, args.get("key"))


async def _check_element(
    store: SecretStore, frame: Any, element: Any, value: Any, action: str, key: str | None
) -> None:
    if store.bound_in(value):
        check_origin(store, value, origin_of(str(frame.url)), "the frame that holds the element")
    keyname = str(key or "").split("+")[-1]
    enter = keyname in ("Enter", "NumpadEnter") or (
        action == "type" and isinstance(value, dict) and "\n" in str(value.get("value", ""))
    )
    # What can submit a form: a click, Enter (implicit submission), Space on a focused submit button.
    if element is None or not (action in ("click", "double_click") or enter or keyname in (" ", "Space")):
        return
    form = await element.evaluate(_SUBMISSION_JS, enter)  # a failure: dispatch (or replay) translates it
    if not form:
        return
    values = [v for v in form.get("values", []) if isinstance(v, str)]
    held = [name for name in store.bound if any(store.value_of(name) in v for v in values)]
    action_url = str(form.get("action") or "")
    check_origin(store, [store.value_of(name) for name in held], origin_of(action_url), "the form's submission")
