/**
 * @module The script of /account and /confirm-email-change (served as /assets/account.js, after
 * app.js; plain JavaScript, no build step). It fills the session and linked sign-in lists from the
 * API, and sends the forms that name their endpoint in `data-account-api`. It tells a wrong
 * current password (401 invalid_credentials: stay and say so) from a lost session (401
 * not_authenticated: sign in again, then come back). Everything it shows is set as text.
 */
'use strict';

(function () {
  var page = document.body.getAttribute('data-page');
  var devMode = document.body.getAttribute('data-dev-mode') === 'true';
  var messageBox = document.getElementById('message');

  // The confirmation link carries its token in the address; the form holds it now.
  if (page === 'confirm-email-change' && /[?&]token=/.test(window.location.search)) {
    window.history.replaceState(null, '', window.location.pathname);
  }

  function showMessage(kind, text) {
    if (!messageBox) return;
    messageBox.classList.remove('message--error', 'message--success');
    messageBox.classList.add(kind === 'error' ? 'message--error' : 'message--success');
    messageBox.textContent = '';
    window.setTimeout(function () {
      messageBox.textContent = text;
      messageBox.focus();
    }, 30);
  }

  function call(method, url, data) {
    var init = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (data !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(data);
    }
    return fetch(url, init).then(function (response) {
      return response
        .json()
        .catch(function () {
          return null;
        })
        .then(function (body) {
          return { response: response, body: body, code: body && typeof body.error === 'string' ? body.error : '' };
        });
    });
  }

  function signInAgain() {
    window.location.assign('/login?return_to=' + encodeURIComponent('/account'));
  }

  // --- Messages: the page's catalog texts, read once by app.js (which runs first) ---
  var messages = window.gatehouseMessages;
  var lang = messages.lang;
  var MESSAGES = messages.texts;
  var msg = messages.msg;
  var serverText = messages.serverText;

  var FIELD_NAMES = {
    newPassword: msg('script.field.newPassword'),
    newEmail: msg('script.field.newEmail'),
    currentPassword: msg('script.field.currentPassword'),
    token: msg('script.field.token'),
    code: msg('script.field.code'),
  };

  /** Words for a failed call; null when the page has already moved on (a lost session). */
  function describeFailure(result) {
    var code = result.code;
    var body = result.body;
    if (code === 'not_authenticated') {
      signInAgain();
      return null;
    }
    if (code === 'invalid_credentials') return msg('script.account.error.wrongPassword');
    if (code === 'reauthentication_required') {
      return page === 'account' && document.querySelector('input[name="currentPassword"]')
        ? msg('script.account.error.passwordNeeded')
        : msg('script.account.error.signInAgain');
    }
    if (code === 'account_locked') return msg('script.account.error.locked');
    if (code === 'rate_limited') return msg('script.account.error.rateLimited');
    if (code === 'email_exists') return msg('script.account.error.emailExists');
    if (code === 'last_sign_in_method') return msg('script.account.error.lastMethod');
    if (code === 'invalid_code') return msg('script.account.error.invalidCode');
    if (code === 'invalid_token') return msg('script.account.error.invalidToken');
    // The issues' own words are English: another language shows its catalog's text for the code instead.
    var translatedValidation = lang !== 'en' && MESSAGES['error.validation_error'];
    if (code === 'validation_error' && !translatedValidation && body && Array.isArray(body.issues) && body.issues.length > 0) {
      return body.issues
        .map(function (issue) {
          return (FIELD_NAMES[String(issue.path).split('.')[0]] || msg('script.field.other')) + ' ' + issue.message + '.';
        })
        .join(' ');
    }
    if (result.response.status >= 500) return msg('script.error.server');
    return (body && serverText(body.message, code)) || msg('script.error.generic');
  }

  function fail(result) {
    var text = describeFailure(result);
    if (text !== null) showMessage('error', text);
  }

  /**
   * A new password the server refused as too common or breached: the page's words beside the
   * field (the server's issue texts are English and fixed; app.js hides it again on typing).
   */
  function showPasswordProblem(form, body) {
    var box = form.querySelector('[data-password-problem]');
    var issues = body && Array.isArray(body.issues) ? body.issues : [];
    if (!box) return;
    var text = null;
    issues.forEach(function (issue) {
      if (text || String(issue.path).split('.')[0] !== box.getAttribute('data-password-problem')) return;
      if (/^is too common\b/.test(String(issue.message))) text = msg('script.check.passwordCommon');
      else if (/^has appeared in a data breach\b/.test(String(issue.message))) text = msg('script.check.passwordBreached');
    });
    if (!text) return;
    box.textContent = text;
    box.hidden = false;
    var field = form.querySelector('[name="' + box.getAttribute('data-password-problem') + '"]');
    if (field) field.setAttribute('aria-invalid', 'true');
  }

  function networkFailure() {
    showMessage('error', msg('script.error.network'));
  }

  function formatTime(iso) {
    var date = new Date(iso);
    // In the page's language (<html lang>), in the reader's own time zone.
    return isNaN(date.getTime()) ? iso : new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
  }

  function item(lines, button) {
    var li = document.createElement('li');
    lines.forEach(function (line, index) {
      var p = document.createElement(index === 0 ? 'strong' : 'span');
      p.textContent = line;
      li.appendChild(p);
    });
    if (button) li.appendChild(button);
    return li;
  }

  function actionButton(label, onClick) {
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.textContent = label;
    button.addEventListener('click', function () {
      button.disabled = true;
      onClick().finally(function () {
        button.disabled = false;
      });
    });
    return button;
  }

  function fill(list, items, emptyText) {
    list.textContent = '';
    if (items.length === 0) list.appendChild(item([emptyText]));
    items.forEach(function (each) {
      list.appendChild(each);
    });
  }

  // --- Sessions ---
  var sessionList = document.getElementById('session-list');

  /** "Chrome on Linux" from the names the server read in the user-agent string; the browser alone without a system; never the raw string. */
  function deviceWords(session) {
    if (!session.browser) return msg('script.account.unknownBrowser');
    return session.os ? msg('script.account.browserOn', { browser: session.browser, os: session.os }) : session.browser;
  }
  function loadSessions() {
    if (!sessionList) return Promise.resolve();
    return call('GET', '/api/auth/sessions').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        sessionList,
        result.body.sessions.map(function (session) {
          var device = deviceWords(session);
          var lines = [
            session.current ? msg('script.account.thisBrowser', { browser: device }) : device,
            msg('script.account.sessionFrom', { ip: session.ip || msg('script.account.unknownAddress'), when: formatTime(session.createdAt) }),
            msg('script.account.lastSeen', { when: formatTime(session.lastSeenAt) }),
          ];
          var li = item(
            lines,
            actionButton(session.current ? msg('script.account.signOut') : msg('script.account.signItOut'), function () {
              return call('DELETE', '/api/auth/sessions/' + encodeURIComponent(session.id)).then(function (deleted) {
                if (!deleted.response.ok) return fail(deleted);
                if (session.current) return window.location.assign('/login?signed_out=1');
                showMessage('success', msg('script.account.sessionSignedOut'));
                return loadSessions();
              }, networkFailure);
            }),
          );
          if (session.current) li.classList.add('item--current');
          return li;
        }),
        msg('script.account.noSessions'),
      );
    }, networkFailure);
  }

  var revokeOthers = document.getElementById('revoke-others');
  if (revokeOthers) {
    revokeOthers.addEventListener('click', function () {
      call('POST', '/api/auth/sessions/revoke-others').then(function (result) {
        if (!result.response.ok) return fail(result);
        var n = result.body.revoked;
        showMessage('success', n === 0 ? msg('script.account.nowhereElse') : msg('script.account.signedOutOthers', { count: n }));
        return loadSessions();
      }, networkFailure);
    });
  }

  // --- Linked sign-ins ---
  var linkedList = document.getElementById('linked-list');
  function loadLinked() {
    if (!linkedList) return Promise.resolve();
    return call('GET', '/api/auth/accounts').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        linkedList,
        result.body.accounts.map(function (account) {
          return item(
            [account.provider + ': ' + account.login, msg('script.account.linkedAt', { when: formatTime(account.linkedAt) })],
            actionButton(msg('script.account.unlink'), function () {
              var password = document.getElementById('linked-current');
              // Unlinking re-authenticates: the password beside the list, when the account has one.
              var body = password && password.value !== '' ? { currentPassword: password.value } : {};
              return call('DELETE', '/api/auth/accounts/' + encodeURIComponent(account.provider), body).then(function (deleted) {
                if (!deleted.response.ok) return fail(deleted);
                showMessage('success', msg('script.account.unlinked', { provider: account.provider }));
                return loadLinked();
              }, networkFailure);
            }),
          );
        }),
        msg('script.account.noProvider'),
      );
    }, networkFailure);
  }

  // --- Apps with access (apps signing people in through Gatehouse as their OpenID Connect provider) ---
  var appList = document.getElementById('app-list');
  function loadApps() {
    if (!appList) return Promise.resolve();
    return call('GET', '/api/auth/grants').then(function (result) {
      if (!result.response.ok) return fail(result);
      fill(
        appList,
        result.body.grants.map(function (app) {
          return item(
            [app.clientName, msg('script.account.appSince', { when: formatTime(app.createdAt) })],
            actionButton(msg('script.account.appRevoke'), function () {
              return call('DELETE', '/api/auth/grants/' + encodeURIComponent(app.clientId)).then(function (deleted) {
                if (!deleted.response.ok) return fail(deleted);
                showMessage('success', msg('script.account.appRevoked', { app: app.clientName }));
                return loadApps();
              }, networkFailure);
            }),
          );
        }),
        msg('script.account.noApps'),
      );
    }, networkFailure);
  }

  // --- Two-factor sign-in ---
  var mfaStatusText = document.getElementById('mfa-status');
  function showOnly(ids) {
    ['mfa-setup-form', 'mfa-enable-form', 'mfa-regenerate-form', 'mfa-disable-form'].forEach(function (id) {
      var element = document.getElementById(id);
      if (element) element.hidden = ids.indexOf(id) < 0;
    });
  }
  function showRecoveryCodes(codes) {
    var list = document.getElementById('mfa-code-list');
    list.textContent = '';
    codes.forEach(function (code) {
      var li = document.createElement('li');
      li.textContent = code;
      list.appendChild(li);
    });
    document.getElementById('mfa-codes').hidden = false;
  }
  function loadMfa() {
    if (!mfaStatusText) return Promise.resolve();
    return call('GET', '/api/auth/2fa').then(function (result) {
      if (!result.response.ok) return fail(result);
      if (result.body.totp.enabled) {
        mfaStatusText.textContent = msg('script.account.mfaStatusOn', { left: result.body.recoveryCodesLeft });
        showOnly(['mfa-regenerate-form', 'mfa-disable-form']);
      } else {
        mfaStatusText.textContent = msg('script.account.mfaStatusOff');
        showOnly(['mfa-setup-form']);
      }
    }, networkFailure);
  }

  // --- Forms ---
  function setBusy(form, busy) {
    var button = form.querySelector('button[type="submit"]');
    if (!button) return;
    if (busy) {
      button.setAttribute('data-idle-text', button.textContent);
      button.textContent = button.getAttribute('data-busy-text') || button.textContent;
    } else {
      button.textContent = button.getAttribute('data-idle-text') || button.textContent;
    }
    button.disabled = busy;
  }

  var onSuccess = {
    'password-form': function (form) {
      form.reset();
      showMessage('success', msg('script.account.passwordChanged'));
      return loadSessions();
    },
    'email-form': function (form, body) {
      var address = form.querySelector('input[name="newEmail"]').value.trim();
      form.reset();
      showMessage('success', msg('script.account.emailLinkSent', { address: address }));
      var box = document.getElementById('dev-link');
      var anchor = document.getElementById('dev-link-anchor');
      if (devMode && box && anchor && body && typeof body.token === 'string') {
        anchor.href = '/confirm-email-change?token=' + encodeURIComponent(body.token);
        anchor.textContent = msg('script.dev.confirmationLink');
        box.hidden = false;
      }
    },
    'delete-form': function () {
      document.querySelectorAll('main section, main nav').forEach(function (each) {
        each.hidden = true;
      });
      showMessage('success', msg('script.account.deleted'));
    },
    'mfa-setup-form': function (form, body) {
      form.reset();
      // The SVG is made by the server; as an image it can run nothing, and data: images are allowed.
      document.getElementById('mfa-qr').src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(body.qrSvg);
      document.getElementById('mfa-secret').textContent = body.secret;
      showOnly(['mfa-enable-form']);
      document.getElementById('mfa-code').focus();
    },
    'mfa-enable-form': function (form, body) {
      form.reset();
      document.getElementById('mfa-secret').textContent = '';
      showRecoveryCodes(body.recoveryCodes);
      showMessage('success', msg('script.account.mfaOn'));
      return loadMfa();
    },
    'mfa-regenerate-form': function (form, body) {
      form.reset();
      showRecoveryCodes(body.recoveryCodes);
      showMessage('success', msg('script.account.codesReady'));
      return loadMfa();
    },
    'mfa-disable-form': function (form) {
      form.reset();
      document.getElementById('mfa-codes').hidden = true;
      showMessage('success', msg('script.account.mfaOff'));
      return loadMfa();
    },
    'confirm-email-change-form': function (form) {
      form.hidden = true;
      showMessage('success', msg('script.account.emailChanged'));
      document.getElementById('continue').hidden = false;
    },
  };

  document.querySelectorAll('form[data-account-api]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.getAttribute('aria-busy') === 'true') return;
      var word = form.getAttribute('data-confirm-word');
      var confirmInput = form.querySelector('input[name="confirm"]');
      if (word && confirmInput && confirmInput.value.trim() !== word) {
        confirmInput.setAttribute('aria-invalid', 'true');
        confirmInput.focus();
        showMessage('error', msg('script.account.typeWord', { word: word }));
        return;
      }
      var data = {};
      new FormData(form).forEach(function (value, name) {
        var input = form.querySelector('[name="' + name + '"]');
        if (input && input.hasAttribute('data-not-sent')) return;
        data[name] = String(value);
      });
      setBusy(form, true);
      form.setAttribute('aria-busy', 'true');
      call('POST', form.getAttribute('data-account-api'), data)
        .then(function (result) {
          if (result.response.ok) return onSuccess[form.id](form, result.body);
          fail(result);
          showPasswordProblem(form, result.body);
        }, networkFailure)
        .finally(function () {
          setBusy(form, false);
          form.removeAttribute('aria-busy');
        });
    });
  });

  loadSessions();
  loadApps();
  loadLinked();
  loadMfa();
})();
