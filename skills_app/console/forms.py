"""Console forms. They parse what the browser sends; the rules live in services and domain.

A form never re-states a limit or a lifecycle rule: the service called with the parsed values
raises the product's error, and ``add_service_error`` puts its message next to the field it
names (``details.field``), or at the top of the form.
"""

from __future__ import annotations

from typing import Any, cast

from django import forms

from skills_app import access, errors
from skills_app.domain.permission_modes import DUAL_SIGN_REQUIRED, MUTATING_WITH_CONFIRM, READ_ONLY
from skills_app.domain.skillmd import parse_skill_md
from skills_app.mcp_profiles import DEFAULT_PROFILE, profile_choices
from skills_app.models import Membership
from skills_app.selectors.accounts import AuditFilter
from skills_app.services.events import EVENT_TYPES


def add_service_error(form: forms.Form, exc: errors.XmemoError) -> None:
    """Show a service error on the field it names, else as a form-wide error."""
    name = str(exc.details.get("field", "")).split(".", 1)[0].split("[", 1)[0]
    form.add_error(name if name in form.fields else None, exc.message)


def frontmatter_from_text(text: str) -> dict[str, Any]:
    """The frontmatter textarea (YAML of the keys besides name and description) as a dict,
    read by the same loader as a SKILL.md."""
    if not text.strip():
        return {}
    try:
        return parse_skill_md(f"---\n{text.rstrip()}\n---\n", path="frontmatter").frontmatter
    except errors.ValidationFailed as exc:
        line = exc.details.get("line")
        if isinstance(line, int) and line > 1:  # the wrapper's '---' is line 1
            exc.message = exc.message.replace(f"at line {line}", f"at line {line - 1}")
        raise


class SkillForm(forms.Form):
    """The scalar parts of a revision; components are rows (see ``components``)."""

    slug = forms.CharField(required=False, help_text="a-z, 0-9 and '-', up to 64 characters")
    name = forms.CharField(required=False)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    frontmatter = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 5, "spellcheck": "false"}),
        help_text="Other frontmatter keys as YAML (license, allowed-tools, metadata, …).",
    )
    instruction_body = forms.CharField(
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 22, "spellcheck": "true"}),
    )
    message = forms.CharField(required=False, help_text="What changed and why (optional).")
    base_revision_id = forms.CharField(required=False, widget=forms.HiddenInput)
    intent = forms.ChoiceField(choices=[("draft", "draft"), ("publish", "publish")], required=False)

    def clean_frontmatter(self) -> dict[str, Any]:
        try:
            return frontmatter_from_text(self.cleaned_data.get("frontmatter") or "")
        except errors.ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from exc

    def clean_intent(self) -> str:
        return self.cleaned_data.get("intent") or "draft"


class ImportForm(forms.Form):
    file = forms.FileField(
        required=False,
        help_text="A SKILL.md, a skill folder as ZIP (or a Source Capsule), or a skill.json.",
    )
    url = forms.URLField(
        required=False,
        assume_scheme="https",
        help_text="A GitHub folder (https://github.com/OWNER/REPO/tree/REF/PATH) "
        "or a ClawHub skill page.",
    )
    slug = forms.CharField(required=False, help_text="Optional: store under this slug.")
    intent = forms.ChoiceField(
        choices=[("draft", "Save as draft"), ("publish", "Publish (or propose, in a team)")],
        initial="draft",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if bool(data.get("file")) == bool(data.get("url")):
            raise forms.ValidationError("Choose a file to upload or paste a URL (one of them).")
        return data


class RestoreForm(forms.Form):
    backup = forms.FileField(
        help_text="A workspace export (…-backup.zip). Restores into this team only while it "
        "holds no skills."
    )


class ExportForm(forms.Form):
    TARGETS = (
        ("revision", "One revision"),
        ("skill", "One skill, every revision"),
        ("workspace", "The whole workspace as a backup (admins)"),
    )
    target = forms.ChoiceField(choices=TARGETS, initial="skill", widget=forms.RadioSelect)
    skill_id = forms.ChoiceField(required=False, label="Skill")
    revision_id = forms.CharField(required=False, label="Revision id")

    def __init__(self, *args: Any, skill_choices: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["skill_id"]).choices = [("", "—"), *skill_choices]


class WorkspaceForm(forms.Form):
    slug = forms.CharField(help_text="a-z, 0-9 and '-', up to 64 characters; used in URLs")
    name = forms.CharField()


class MemberAddForm(forms.Form):
    username = forms.CharField()
    role = forms.ChoiceField(choices=Membership.Role.choices, initial="member")


class MemberRoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


class TokenForm(forms.Form):
    name = forms.CharField()
    scopes = forms.MultipleChoiceField(
        choices=[(scope, scope) for scope in access.SCOPES],
        initial=["skills:read", "skills:write"],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
    restrict = forms.BooleanField(required=False, initial=True, label="Only this workspace")
    owner = forms.ChoiceField(
        required=False,
        label="Owned by",
        choices=[
            ("", "me"),
            ("member", "this team, as a member"),
            ("admin", "this team, as an admin"),
        ],
        help_text="A team's token is a service account of the team (owners and admins create "
        "it): it keeps working when you leave, and its role there bounds it.",
    )
    profile = forms.ChoiceField(label="Client profile")
    permission_mode = forms.ChoiceField(
        required=False,
        label="Permission mode",
        choices=[
            ("", "the workspace's"),
            (DUAL_SIGN_REQUIRED, "dual-sign-required"),
            (READ_ONLY, "read-only (only safe scripts run)"),
        ],
        help_text="Makes the rule for this token's scripts stricter than the workspace's, never "
        "looser: the stricter of the two applies.",
    )
    expires_in_days = forms.IntegerField(
        required=False, min_value=1, label="Expires after (days)", help_text="Empty: never."
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["profile"]).choices = profile_choices()
        self.fields["profile"].initial = DEFAULT_PROFILE


AUDIT_ACTION_HELP = "An action (skills.revision.approve) or a dotted prefix (skills.revision)."


class AuditFilterForm(forms.Form):
    action = forms.CharField(
        required=False,
        label="Action",
        help_text=AUDIT_ACTION_HELP,
        widget=forms.TextInput(attrs={"title": AUDIT_ACTION_HELP}),
    )
    actor = forms.CharField(required=False, label="Who")
    target = forms.CharField(required=False, label="Target id")
    since = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def filters(self) -> AuditFilter:
        """The valid filters (none while the form is invalid), for ``audit_entries``."""
        if not self.is_valid():
            return AuditFilter()
        data = self.cleaned_data
        return AuditFilter(
            action=data["action"],
            actor=data["actor"],
            target=data["target"],
            since=data["since"],
            until=data["until"],
        )


class WorkspaceSettingsForm(forms.Form):
    name = forms.CharField()
    require_distinct_reviewer = forms.BooleanField(
        required=False,
        label="Require a reviewer other than the author",
        help_text="On (the default for new teams): a proposal is approved by an admin or owner "
        "who did not write it. Off: admins and owners may approve their own proposals, so "
        "nobody else reads what they publish; meant for a team of one, where nobody else "
        "could review. Every change of this setting is in the audit log.",
    )
    allow_dangerous_scripts = forms.BooleanField(
        required=False, help_text="Owners may run scripts whose class is 'dangerous'."
    )
    required_approvals = forms.IntegerField(
        required=False,
        help_text="How many admins or owners (never the author) must approve a proposal.",
    )
    permission_mode = forms.ChoiceField(
        required=False,
        label="Permission mode",
        choices=[
            (MUTATING_WITH_CONFIRM, "mutating-with-confirm (the default)"),
            (DUAL_SIGN_REQUIRED, "dual-sign-required"),
            (READ_ONLY, "read-only"),
        ],
        help_text="What the team's scripts may do, by class. mutating-with-confirm: safe "
        "scripts run; mutating ones only when the run is confirmed; dangerous ones never. "
        "dual-sign-required: as that, and dangerous scripts run (where dangerous scripts are "
        "allowed) from a revision two distinct reviewers approved, neither its author. "
        "read-only: only safe scripts run. A token may be stricter, never looser. Every change "
        "is in the audit log.",
    )
    # A personal workspace has no review and no permission mode: its form neither shows nor
    # changes these.
    TEAM_FIELDS = ("require_distinct_reviewer", "required_approvals", "permission_mode")

    def clean_permission_mode(self) -> str | None:
        """Left out of the request: the mode stays as it is."""
        return self.cleaned_data.get("permission_mode") or None

    def __init__(self, *args: Any, team: bool, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not team:
            for name in self.TEAM_FIELDS:
                del self.fields[name]


class SecretForm(forms.Form):
    secret_name = forms.CharField(
        label="Name", help_text="The environment variable a script names in its env_allow"
    )
    value = forms.CharField(
        widget=forms.PasswordInput(render_value=False),
        strip=False,
        help_text="Write-only: it is stored encrypted and never shown again.",
    )


class InviteForm(forms.Form):
    email = forms.CharField(label="E-mail address", widget=forms.EmailInput)
    role = forms.ChoiceField(choices=Membership.Role.choices, initial="member")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Shares the members page with MemberAddForm: its own element ids keep labels unique.
        kwargs.setdefault("auto_id", "invite_%s")
        super().__init__(*args, **kwargs)


class NewPasswordMixin(forms.Form):
    """A password typed twice (the rules on the password itself live in the service)."""

    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password2 = forms.CharField(
        label="Password again",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password") != data.get("password2"):
            self.add_error("password2", "The two passwords differ.")
        return data


class InvitedSignupForm(NewPasswordMixin):
    username = forms.CharField(
        help_text="a-z, 0-9 and '-'; also the name of your personal workspace",
        widget=forms.TextInput(attrs={"autocomplete": "username"}),
    )
    field_order = ["username", "password", "password2"]


class SignupForm(InvitedSignupForm):
    email = forms.CharField(label="E-mail address", widget=forms.EmailInput)
    field_order = ["username", "email", "password", "password2"]


class WebhookForm(forms.Form):
    url = forms.CharField(label="Payload URL", widget=forms.URLInput)
    events = forms.MultipleChoiceField(
        choices=[(event, event) for event in EVENT_TYPES],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )
