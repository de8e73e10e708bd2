"""Webhooks of a workspace: subscribe (the secret is shown once), the delivery log, redeliver,
delete. The rules live in ``services.webhooks``; reads in ``selectors.webhooks`` and, for one
webhook or delivery, ``access``."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse

from skills_app import access, errors
from skills_app.access import delivery_for, webhook_for
from skills_app.console.base import Console, console_view
from skills_app.console.forms import WebhookForm, add_service_error
from skills_app.selectors.webhooks import delivery_rows, webhook_rows
from skills_app.services import webhooks

DELIVERIES_SHOWN = 50


@console_view(skills=False)
def webhook_list(request: HttpRequest, console: Console) -> HttpResponse:
    access.require_role(console.actor, console.ws, access.ADMIN_ROLES)
    form = WebhookForm(request.POST or None)
    secret = ""
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            try:
                webhook, secret = webhooks.webhook_create(
                    actor=console.actor,
                    workspace=console.ws,
                    url=form.cleaned_data["url"],
                    events=form.cleaned_data["events"],
                )
            except errors.XmemoError as exc:
                add_service_error(form, exc)
                status = exc.status
            else:
                status = 201
                form = WebhookForm()
                messages.success(request, f"Webhook for {webhook.url} added. Copy its secret now.")
    response = console.render(
        "console/admin/webhooks.html",
        {
            "form": form,
            "secret": secret,
            "webhooks": webhook_rows(actor=console.actor, workspace=console.ws),
        },
        status=status,
    )
    response["Cache-Control"] = "no-store"
    return response


@console_view(skills=False)
def webhook_detail(request: HttpRequest, console: Console, webhook_id: str) -> HttpResponse:
    """The delivery log (GET) or delete (POST)."""
    webhook = webhook_for(actor=console.actor, workspace=console.ws, webhook_id=webhook_id)
    if request.method == "POST":
        webhooks.webhook_delete(actor=console.actor, webhook=webhook)
        messages.success(request, f"Webhook for {webhook.url} deleted.")
        return console.redirect("webhooks")
    deliveries = delivery_rows(actor=console.actor, webhook=webhook, limit=DELIVERIES_SHOWN)
    return console.render(
        "console/admin/webhook_detail.html", {"webhook": webhook, "deliveries": deliveries}
    )


@console_view(skills=False, post_only=True)
def webhook_redeliver(
    request: HttpRequest, console: Console, webhook_id: str, delivery_id: str
) -> HttpResponse:
    webhook = webhook_for(actor=console.actor, workspace=console.ws, webhook_id=webhook_id)
    delivery = delivery_for(actor=console.actor, webhook=webhook, delivery_id=delivery_id)
    webhooks.delivery_redeliver(actor=console.actor, delivery=delivery)
    messages.success(request, f"Delivery {delivery.delivery_id} queued again.")
    return console.redirect("webhook_detail", webhook.webhook_id)
