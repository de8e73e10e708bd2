"""The signed-in user's review e-mail preferences (docs/contract.md §16)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse

from skills_app.console.base import Console, console_view
from skills_app.services.notifications import (
    notification_preferences,
    notification_preferences_as_dict,
    notification_preferences_update,
)


class NotificationsForm(forms.Form):
    review_requests = forms.BooleanField(
        required=False, label="E-mail me when a revision is proposed in a team I review for"
    )
    review_outcomes = forms.BooleanField(
        required=False,
        label="E-mail me when my revision is approved, rejected or sent back for changes",
    )
    comments = forms.BooleanField(
        required=False, label="E-mail me when someone comments on my revision"
    )


@console_view(skills=False)
def notifications(request: HttpRequest, console: Console) -> HttpResponse:
    if request.method == "POST":
        form = NotificationsForm(request.POST)
        if form.is_valid():
            notification_preferences_update(actor=console.actor, changes=form.cleaned_data)
            messages.success(request, "Notification preferences saved.")
            return console.redirect("notifications")
    else:
        current = notification_preferences(actor=console.actor)
        form = NotificationsForm(initial=notification_preferences_as_dict(current))
    return console.render("console/admin/notifications.html", {"form": form})
