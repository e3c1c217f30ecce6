/** One step of a conversation in detail: what the pipeline recorded, grouped (input, expressions, actions, ...). */
import { TableBox } from '../../components/ui.tsx';
import type { Conversation } from '../../api/types.ts';
import { t } from '../../i18n/index.ts';
import { groupStep, showValue } from '../../lib/steps.ts';

export function StepDetails({
  conversation,
  index,
  showProperties = true,
}: {
  conversation: Conversation;
  index: number;
  showProperties?: boolean;
}) {
  const output = conversation.conversationOutputs[index];
  const entries = conversation.conversationSteps?.[index]?.conversationStep ?? [];
  const groups = groupStep(entries);
  return (
    <div className="step-details">
      {output && (
        <dl className="summary">
          {output.input !== undefined && (
            <>
              <dt>{t('steps.input')}</dt>
              <dd>{output.input}</dd>
            </>
          )}
          {output.expressions && (
            <>
              <dt>{t('stepDetails.expressions')}</dt>
              <dd>
                <code>{output.expressions}</code>
              </dd>
            </>
          )}
          {output.intents && (
            <>
              <dt>{t('stepDetails.intents')}</dt>
              <dd>{output.intents.join(', ')}</dd>
            </>
          )}
          <dt>{t('steps.actions')}</dt>
          <dd>{output.actions?.join(', ') || t('common.none')}</dd>
        </dl>
      )}
      {groups.length === 0 && <p className="muted">{t('stepDetails.noData')}</p>}
      {groups.map((g) => (
        <section key={g.title} className={g.title === t('steps.failure') ? 'step-failure' : undefined}>
          <h3>{g.title}</h3>
          <TableBox label={g.title}>
            <table className="compact">
              <tbody>
                {g.entries.map((e) => (
                  <tr key={e.key}>
                    <th scope="row">
                      <code>{e.key}</code>
                    </th>
                    <td>
                      <pre>{showValue(e.value)}</pre>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </section>
      ))}
      {showProperties && <ConversationProperties conversation={conversation} />}
    </div>
  );
}

/** The conversation's properties as they are now. */
export function ConversationProperties({ conversation }: { conversation: Conversation }) {
  const properties = Object.values(conversation.conversationProperties ?? {});
  return (
    <section>
      <h3>{t('stepDetails.properties')}</h3>
      {properties.length === 0 ? (
        <p className="muted">{t('stepDetails.noProperties')}</p>
      ) : (
        <TableBox label={t('stepDetails.properties')}>
          <table className="compact">
            <tbody>
              {properties.map((p) => (
                <tr key={p.name}>
                  <th scope="row">{p.name}</th>
                  <td>
                    <pre>{showValue(p.value)}</pre>
                  </td>
                  <td>{p.scope}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}
